#!/bin/bash
# Adversarial escape tests: every attempt runs inside `cordon run` and tries
# to reach what the sandbox must not reach (host files, processes, network,
# secrets, privileges, the kernel). An attempt that is refused counts as
# passed; one that GETS THROUGH, a probe error, or a missing result line
# counts as failed.
#
# Environment (set by `make check`): CORDON (absolute path of cordon),
# HELPERS (directory of the built helpers, with escape-probe),
# TESTS_SRCDIR (the source tests/ directory).
#
# Host-side fixtures, all removed on exit:
#   - a secret file in a fresh directory under /srv (or /var/tmp), mode 644
#     in a 755 directory: only the view keeps it from the sandbox
#   - the secret file held open on fd 7 and its directory on fd 8
#   - CORDON_ESCAPE_SECRET exported with a random value
#   - a TCP server on 127.0.0.1, an abstract unix socket and a unix socket by
#     path, all on the host (python3)
#   - a SysV shared memory segment (ipcmk)
#   - for the egress attempts (root, ip(8) and python3 needed; skipped
#     otherwise): a network namespace cordon-esc-PID joined to the host by a
#     veth pair (10.213.M.1/30 host side, 10.213.M.2/30 in the namespace)
#     with a TCP server on 10.213.M.2:443 (the upstream the policy allows as
#     upstream.cordon.test, through its test-only hosts file); and host
#     listeners (TCP and UDP, one port) on the host's loopback and on each of
#     its own interface addresses, which record anything that arrives
# The secret's content and the env secret must appear in no sandbox output.
#
# The whole suite takes well under two minutes; every run has a timeout.

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

START=$(date +%s)

# Host files no attempt may change (checked again after the last attempt).
host_canary() {
        local f
        for f in /etc/passwd /etc/group /etc/shadow /etc/hosts /etc/hostname; do
                [ -e "$f" ] && printf '%s %s\n' "$f" "$(sha256sum <"$f" 2>/dev/null | cut -c1-16)"
        done
}
HOST_BEFORE=$(host_canary)
PASSED=0
FAILED=0
FAILED_NAMES=()

: "${CORDON:?CORDON must name the cordon binary}"
: "${HELPERS:?HELPERS must name the directory of the test helpers}"
TESTS_SRCDIR=${TESTS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}

summary() {
        echo "$PASSED passed, $FAILED failed"
}

skip() {
        echo "escape tests skipped: $*"
        echo "0 passed, 0 failed"
        exit 77
}

[ -x "$CORDON" ] || skip "no cordon at $CORDON"
[ -x "$HELPERS/escape-probe" ] || skip "no escape-probe in $HELPERS (make tests/helpers/escape-probe)"

# --- fixtures -------------------------------------------------------------

WORK=
SECRET_DIR=
PIDS=()
SHMID=

EG_NS=
EG_VETH=

cleanup() {
        local p
        for p in "${PIDS[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${PIDS[@]}"; do
                wait "$p" 2>/dev/null
        done
        [ -n "$EG_VETH" ] && ip link del "${EG_VETH}h" >/dev/null 2>&1
        [ -n "$EG_NS" ] && ip netns del "$EG_NS" >/dev/null 2>&1
        exec 7<&- 8<&- 2>/dev/null
        [ -n "$SHMID" ] && ipcrm -m "$SHMID" 2>/dev/null
        [ -n "${DEVFULL_OWNER:-}" ] && chown "$DEVFULL_OWNER" /dev/full 2>/dev/null
        [ -n "${CORE_PATTERN_WAS:-}" ] && printf '%s\n' "$CORE_PATTERN_WAS" >/proc/sys/kernel/core_pattern
        [ -n "$SECRET_DIR" ] && rm -rf -- "$SECRET_DIR"
        [ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rand() {
        od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}

WORK=$(mktemp -d /var/tmp/cordon-esc-run.XXXXXX) || skip "cannot create a work directory"
if [ -d /srv ] && [ -w /srv ]; then
        SECRET_DIR=$(mktemp -d /srv/cordon-esc-XXXXXX)
else
        SECRET_DIR=$(mktemp -d /var/tmp/cordon-esc-XXXXXX)
fi
[ -n "$SECRET_DIR" ] || skip "cannot create the secret's directory"
chmod 755 "$SECRET_DIR"
SECRET="cordon-escape-secret-$(rand)"
SECRET_FILE=$SECRET_DIR/secret
printf '%s\n' "$SECRET" >"$SECRET_FILE"
chmod 644 "$SECRET_FILE"
ENV_SECRET="cordon-env-secret-$(rand)"
export CORDON_ESCAPE_SECRET=$ENV_SECRET
ABSTRACT="cordon-esc-$(rand)"
UNIX_PATH=$SECRET_DIR/sock

# a host-side fd to the secret and one to its directory: nothing >2 may cross
exec 7<"$SECRET_FILE"
exec 8<"$SECRET_DIR"

PYTHON=$(command -v python3 || true)
PORT=
if [ -n "$PYTHON" ]; then
        # TCP on the host's loopback, answering with a banner
        timeout 170 "$PYTHON" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); c.sendall(b"host-tcp-banner\n"); c.close()
' "$WORK/tcp.port" </dev/null >/dev/null 2>&1 &
        PIDS+=($!)
        # an abstract unix socket and one by path (outside the view)
        timeout 170 "$PYTHON" -c '
import socket, sys, threading, os
a = socket.socket(socket.AF_UNIX); a.bind("\0" + sys.argv[1]); a.listen(16)
p = socket.socket(socket.AF_UNIX); p.bind(sys.argv[2]); p.listen(16); os.chmod(sys.argv[2], 0o777)
open(sys.argv[3], "w").write("ok")
def serve(s):
    while True:
        c, _ = s.accept(); c.sendall(b"host-unix-banner\n"); c.close()
threading.Thread(target=serve, args=(p,), daemon=True).start()
serve(a)
' "$ABSTRACT" "$UNIX_PATH" "$WORK/unix.ready" </dev/null >/dev/null 2>&1 &
        PIDS+=($!)
        for _ in $(seq 50); do
                [ -s "$WORK/tcp.port" ] && [ -s "$WORK/unix.ready" ] && break
                sleep 0.1
        done
        PORT=$(cat "$WORK/tcp.port" 2>/dev/null)
fi

SHMKEY=
if command -v ipcmk >/dev/null && command -v ipcs >/dev/null; then
        SHMID=$(ipcmk -M 4096 -p 0666 2>/dev/null | sed -n 's/.*id: *\([0-9]*\).*/\1/p')
        if [ -n "$SHMID" ]; then
                SHMKEY=$(ipcs -m | awk -v id="$SHMID" '$2 == id { print $1 }')
        fi
fi

# The egress fixture: an upstream the policy allows, and host listeners that
# must never see anything from a sandbox. No traffic goes anywhere but the
# host's loopback and the namespace made here: the policy's hosts file names
# the upstream, so the gate never asks the host's resolver.
EG_POLICY=
EG_UP=
EG_PORT=
EG_HOSTADDRS=()
EG_NOTE=
egress_fixture() {
        local m used i ok a
        [ "$(id -u)" = 0 ] || {
                EG_NOTE="not root (network namespaces)"
                return
        }
        command -v ip >/dev/null || {
                EG_NOTE="no ip(8)"
                return
        }
        [ -n "$PYTHON" ] || {
                EG_NOTE="no python3"
                return
        }
        # 10.213.M.0/30, M in 126..250 (tests/integration/egress.sh takes 1..125)
        used=$( (ip -o addr show; ip route show table all) 2>/dev/null)
        m=$(($$ % 125 + 126))
        ok=
        for ((i = 0; i < 125; i++)); do
                if ! grep -qE "10\.213\.$m\.[0-9]" <<<"$used"; then
                        ok=1
                        break
                fi
                m=$(((m - 126 + 1) % 125 + 126))
        done
        [ -n "$ok" ] || {
                EG_NOTE="no free 10.213.M.0/30"
                return
        }
        ip netns add "cordon-esc-$$" 2>/dev/null || {
                EG_NOTE="cannot create a network namespace"
                return
        }
        EG_NS="cordon-esc-$$"
        EG_VETH="cesc$$"
        if ! {
                ip link add "${EG_VETH}h" type veth peer name "${EG_VETH}n" &&
                        ip link set "${EG_VETH}n" netns "$EG_NS" &&
                        ip addr add "10.213.$m.1/30" dev "${EG_VETH}h" &&
                        ip link set "${EG_VETH}h" up &&
                        ip -n "$EG_NS" addr add "10.213.$m.2/30" dev "${EG_VETH}n" &&
                        ip -n "$EG_NS" link set "${EG_VETH}n" up &&
                        ip -n "$EG_NS" link set lo up
        } >/dev/null 2>&1; then
                EG_NOTE="cannot set up the veth pair"
                return
        fi
        # the upstream: a banner on every connection, each one logged
        timeout 170 ip netns exec "$EG_NS" "$PYTHON" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 443)); s.listen(128)
open(sys.argv[1], "w").write("ok")
while True:
    c, a = s.accept()
    try:
        c.sendall(b"upstream-banner\n")
    except OSError:
        pass
    c.close()
' "$WORK/upstream.ready" </dev/null >/dev/null 2>&1 &
        PIDS+=($!)
        # the host's own addresses (not loopback, not link-local: those need a scope)
        while read -r a; do
                EG_HOSTADDRS+=("$a")
        done < <(ip -o addr show 2>/dev/null | awk '$2 != "lo" && $2 !~ /^cesc/ { sub(/\/.*/, "", $4); print $4 }' |
                grep -v '^fe80:')
        # the host listeners: TCP and UDP on one port, on loopback and every host address
        timeout 170 "$PYTHON" -c '
import socket, sys, threading, os
log, portfile, addrs = sys.argv[1], sys.argv[2], ["127.0.0.1", "::1"] + sys.argv[3:]
def record(what):
    with open(log, "a") as f:
        f.write(what + "\n")
first = socket.socket(); first.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
first.bind(("127.0.0.1", 0)); first.listen(16)
port = first.getsockname()[1]
socks = [first]
for a in addrs:
    fam = socket.AF_INET6 if ":" in a else socket.AF_INET
    for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        if a == "127.0.0.1" and typ == socket.SOCK_STREAM:
            continue
        try:
            s = socket.socket(fam, typ)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((a, port))
            if typ == socket.SOCK_STREAM:
                s.listen(16)
            socks.append(s)
        except OSError:
            pass
def serve(s):
    while True:
        if s.type == socket.SOCK_STREAM:
            c, peer = s.accept()
            record("tcp %s <- %s" % (s.getsockname()[0], peer[0]))
            try:
                c.sendall(b"host-tcp-banner\n")
            except OSError:
                pass
            c.close()
        else:
            d, peer = s.recvfrom(4096)
            record("udp %s <- %s" % (s.getsockname()[0], peer[0]))
for s in socks[1:]:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
open(portfile + ".tmp", "w").write(str(port)); os.rename(portfile + ".tmp", portfile)
serve(first)
' "$WORK/hostconn.log" "$WORK/eg.port" "${EG_HOSTADDRS[@]}" </dev/null >/dev/null 2>&1 &
        PIDS+=($!)
        for _ in $(seq 50); do
                [ -s "$WORK/eg.port" ] && [ -e "$WORK/upstream.ready" ] && break
                sleep 0.1
        done
        EG_PORT=$(cat "$WORK/eg.port" 2>/dev/null)
        [ -n "$EG_PORT" ] && [ -e "$WORK/upstream.ready" ] || {
                EG_NOTE="the upstream or the host listeners did not start"
                return
        }
        # the upstream answers from the host
        if ! "$PYTHON" -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 443), timeout=3)
sys.exit(0 if s.recv(64).startswith(b"upstream-banner") else 1)' "10.213.$m.2"; then
                EG_NOTE="the upstream does not answer from the host"
                return
        fi
        printf 'upstream.cordon.test 10.213.%s.2\n' "$m" >"$WORK/eg.hosts"
        cat >"$WORK/eg.policy.json" <<EOF
{"networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "upstream.cordon.test", "port": 443, "reason": "escape tests"}],
                   "testing": {"hostsFile": "$WORK/eg.hosts", "allowPrivateNetworks": ["10.213.$m.0/30"]}}}
EOF
        EG_POLICY=$WORK/eg.policy.json
        EG_UP="10.213.$m.2:443"
}
egress_fixture

# --- running attempts -----------------------------------------------------

N=0

# record LABEL_SUFFIX NAME RC OUTFILE: judges one attempt's output. The
# result may follow terminal echo on its line (script(1) types its EOF into
# the pty), so it is looked for anywhere on a line.
record() {
        local suffix=$1 name=$2 rc=$3 out=$4 line
        line=$(tr -d '\r\0' <"$out" | grep -a -o -m1 "escape $name: .*")
        if [ -z "$line" ]; then
                echo "escape $name: FAILED (no result line; exit $rc)${suffix:+ [$suffix]}"
                tr -d '\r\0' <"$out" | grep -a -v -F -e "$SECRET" -e "$ENV_SECRET" | tail -n 3 | sed 's/^/    | /'
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$name")
                return
        fi
        echo "$line${suffix:+ [$suffix]}"
        case "$line" in
        "escape $name: blocked ("*)
                if [ "$rc" -eq 0 ]; then
                        PASSED=$((PASSED + 1))
                        return
                fi
                echo "    (but the probe exited $rc)"
                ;;
        esac
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("$name")
}

# probe NAME ARGS...: one attempt of the C probe in a fresh sandbox
probe() {
        local name=$1 rc
        shift
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name" "$@" \
                </dev/null >"$out" 2>&1
        rc=$?
        record "" "$name" "$rc" "$out"
}

# probe_egress NAME ARGS...: one attempt under the egress policy (the upstream
# allowed; the gate in force)
probe_egress() {
        local name=$1 rc
        shift
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run --policy "$EG_POLICY" --bind "$BIND:/helpers:ro" -- \
                /helpers/escape-probe "$name" "$@" </dev/null >"$out" 2>&1
        rc=$?
        record "egress policy" "$name" "$rc" "$out"
        # which attempts made something arrive at the host's listeners
        local seen
        seen=$(wc -l 2>/dev/null <"$WORK/hostconn.log" || echo 0)
        if [ "${seen:-0}" != "$EG_SEEN" ]; then
                EG_SEEN_BY+=("$name")
                EG_SEEN=${seen:-0}
        fi
}
EG_SEEN=0
EG_SEEN_BY=()

# probe_stdin FILE NAME ARGS...: the same with stdin opened on FILE on the host
probe_stdin() {
        local in=$1 name=$2 rc
        shift 2
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name" "$@" \
                <"$in" >"$out" 2>&1
        rc=$?
        # cordon refusing to start with a directory as stdin is the first
        # layer holding: the probe never runs
        if [ "$rc" = 125 ] && grep -q "refuses to pass it in" "$out"; then
                echo "escape $name: blocked (cordon refused a directory fd as stdin)" >>"$out"
                rc=0
        fi
        record "stdin is the secret's host directory" "$name" "$rc" "$out"
}

# the same with stderr (fd 2) opened read-only on a host directory
probe_stderr_dir() {
        local in=$1 name=$2 rc
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name" \
                </dev/null >"$out" 2<"$in"
        rc=$?
        if [ "$rc" = 125 ]; then
                echo "escape $name: blocked (cordon refused a directory fd as stderr)" >>"$out"
                rc=0
        fi
        record "stderr is the secret's host directory" "$name" "$rc" "$out"
}

# probe_pty MODE NAME: the same on a terminal (script(1) gives cordon a pty);
# MODE "" lets cordon give the command its own pty, "--no-tty" passes the
# outer (host-side) terminal straight through.
probe_pty() {
        local mode=$1 name=$2 rc cmd
        N=$((N + 1))
        local out=$WORK/out.$N
        if ! command -v script >/dev/null; then
                timeout -k 5 30 "$CORDON" run $mode --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name" \
                        </dev/null >"$out" 2>&1
                rc=$?
                record "no pty: script(1) missing" "$name" "$rc" "$out"
                return
        fi
        cmd=$(printf '%q ' timeout --foreground -k 5 25 "$CORDON" run $mode --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name")
        timeout -k 5 30 script -qec "$cmd" /dev/null </dev/null >"$out" 2>&1
        rc=$?
        record "${mode:-sandbox pty}${mode:+ host pty passed through}" "$name" "$rc" "$out"
}

# shell NAME SCRIPT: an attempt written with the sandbox's own tools; the
# script prints its own result line
shell() {
        local name=$1 script=$2 rc
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run -- /bin/sh -c "$script" </dev/null >"$out" 2>&1
        rc=$?
        record "" "$name" "$rc" "$out"
}

# probe_core: the core-dump attempt with the host's core_pattern a pipe to
# a logging program for its duration (a host program run as root: what
# systemd-coredump or apport are), so that a dump is seen whatever the
# sandbox's working directory allows. The host's pattern is put back at
# once (and by cleanup). Other runners may run meanwhile: only dumps of a
# process with a host uid other than root's (the sandbox's range) count.
probe_core() {
        local rc hits
        N=$((N + 1))
        local out=$WORK/out.$N
        if ! CORE_PATTERN_WAS=$(cat /proc/sys/kernel/core_pattern 2>/dev/null) || [ ! -w /proc/sys/kernel/core_pattern ]; then
                CORE_PATTERN_WAS=
                echo "escape core-dump: skipped (kernel.core_pattern cannot be set here)"
                return
        fi
        printf '#!/bin/sh\n[ "$1" != 0 ] && echo "dump from host uid $1 ($2)" >>%s\ncat >/dev/null\n' \
                "$WORK/core.log" >"$WORK/core-helper"
        chmod 755 "$WORK/core-helper"
        : >"$WORK/core.log"
        echo "|$WORK/core-helper %u %e" >/proc/sys/kernel/core_pattern
        timeout -k 5 30 "$CORDON" run --bind "$BIND:/helpers:ro" -- /helpers/escape-probe core-dump \
                </dev/null >"$out" 2>&1
        rc=$?
        printf '%s\n' "$CORE_PATTERN_WAS" >/proc/sys/kernel/core_pattern
        CORE_PATTERN_WAS=
        sleep 0.2 # the last helper's line
        hits=$(grep -c . "$WORK/core.log")
        if [ "$hits" != 0 ]; then
                echo "escape core-dump: GOT THROUGH ($hits dumps reached the host's core_pattern pipe: $(head -n1 "$WORK/core.log"))" >"$out.host"
                cat "$out" >>"$out.host"
                out=$out.host
        fi
        record "core_pattern a host pipe" core-dump "$rc" "$out"
}

# The probe is bound into the sandbox. A bind source under the host's /tmp
# is hidden by cordon's staging tmpfs, so fall back to a copy elsewhere.
BIND=$HELPERS
timeout -k 5 30 "$CORDON" run --bind "$BIND:/helpers:ro" -- /helpers/escape-probe selftest </dev/null \
        >"$WORK/selftest" 2>&1
if ! grep -q '^escape selftest: blocked' "$WORK/selftest"; then
        mkdir -p "$WORK/bin" && chmod 755 "$WORK" "$WORK/bin"
        cp "$HELPERS/escape-probe" "$WORK/bin/" && chmod 755 "$WORK/bin/escape-probe"
        echo "note: --bind $HELPERS:/helpers:ro failed ($(head -n1 "$WORK/selftest")); using a copy in $WORK/bin"
        BIND=$WORK/bin
        timeout -k 5 30 "$CORDON" run --bind "$BIND:/helpers:ro" -- /helpers/escape-probe selftest </dev/null \
                >"$WORK/selftest" 2>&1
fi
if ! grep -q '^escape selftest: blocked' "$WORK/selftest"; then
        echo "cordon cannot run the probe at all:"
        sed 's/^/    | /' "$WORK/selftest"
        if grep -qi 'user namespaces\|cannot create the sandbox' "$WORK/selftest"; then
                skip "cordon cannot create a sandbox on this host"
        fi
        echo "0 passed, 1 failed"
        exit 1
fi

# --- the attempts ---------------------------------------------------------

S=$SECRET_FILE

# mounts and roots
probe mount
probe umount-shadow
probe pivot-root
probe chroot
probe fsopen
probe open-tree
probe mount-setattr

# namespaces
probe unshare-user
probe unshare-mount
probe clone-user
probe clone3-user
probe setns

# other processes
probe ptrace-attach
probe ptrace-traceme
probe process-vm-readv
probe pidfd-getfd
probe proc-mem-init
probe open-by-handle
probe_core

# kernel attack surface, host-wide state
probe io-uring
probe bpf
# the egress floor's programs pinned on the host (net/floor.c): a start has pinned them where
# the host can; neither bpffs, nor their directory, nor a pin is reachable from inside
mapfile -t BPF_PINS < <(ls -d /sys/fs/bpf/cordon/* 2>/dev/null)
if [ "${#BPF_PINS[@]}" -gt 0 ]; then
        probe bpf-pins /sys/fs/bpf /sys/fs/bpf/cordon "${BPF_PINS[@]}"
else
        echo "escape bpf-pins: skipped (no pinned floor programs on this host)"
fi
probe perf-event
probe userfaultfd
probe keyctl
probe add-key
probe kexec
probe modify-ldt
probe init-module
probe iopl
probe ioperm
probe reboot
probe swapon
probe acct
probe settimeofday
probe clock-settime
probe syslog
probe seccomp-listener

# terminals
probe_pty "" tiocsti
probe_pty --no-tty tiocsti
probe tiocsti
probe_pty "" tioclinux
probe tiocsetd

# other syscall ABIs
probe x32
probe i386

# privileges
probe caps
probe setuid-nosuid
probe sethostname
probe setuid-regain

# host files
probe read-secret "$S"
probe proc1-root "$S"
probe proc-self-root "$S"
probe proc1-cwd "$S"
probe symlink-tmp "$S"
probe dotdot-tmp "$S"
probe openat2 "$S"
probe kcore
probe kallsyms
probe sysrq
probe sys
probe proc-sys-write
probe dev-nodes
probe mknod

# read-only places
probe write-usr
probe write-etc
probe write-root

# leaks from the host
probe fd-leak
probe env-leak CORDON_ESCAPE_SECRET
probe_stdin "$SECRET_DIR" stdio-dir
probe_stderr_dir "$SECRET_DIR" stdio-dir

# host processes
probe kill-host "$$" "${PIDS[@]}"
probe proc-pids
probe proc1-cmdline
if [ -n "$SHMID" ] && [ -n "$SHMKEY" ]; then
        probe sysv-ipc "$SHMID" "$SHMKEY"
else
        echo "note: no ipcmk/ipcs; sysv-ipc not attempted"
fi

# network
if [ -n "$PORT" ]; then
        probe net-tcp-host "$PORT"
        probe net-abstract "$ABSTRACT"
        probe unix-path "$UNIX_PATH"
else
        echo "note: no python3 on the host; the host listeners were not started"
        probe net-tcp-host 1
        probe unix-path "$UNIX_PATH"
fi
probe af-packet
probe af-vsock
probe netlink-audit
probe socket-highbits
probe socket-kinds
probe raw-socket
probe ipv6-rthdr
# synthetic addresses without a policy (the gate has no rule at all)
probe egress-pool-oob

# egress: under a policy that allows the runner's upstream
if [ -n "$EG_POLICY" ]; then
        probe_egress egress-loopback "$EG_PORT"
        probe_egress net-tcp-host "$EG_PORT"
        probe_egress egress-literals "$EG_PORT" "${EG_HOSTADDRS[@]}"
        probe_egress raw-socket
        probe_egress af-packet
        probe_egress socket-highbits
        probe_egress io-uring
        probe_egress egress-race "$EG_PORT" "$EG_UP"
        probe_egress egress-unspec-reconnect "$EG_PORT" "$EG_UP"
        probe_egress egress-unspec-listen "$EG_UP"
        probe_egress egress-gate-ifconf "$EG_UP"
        probe_egress egress-gate-sockopts "$EG_UP"
        probe_egress egress-pool-oob
        # nothing may have arrived at any host listener
        N=$((N + 1))
        sleep 0.3
        if [ -s "$WORK/hostconn.log" ]; then
                echo "escape egress-host-listeners: GOT THROUGH (the host listeners on port $EG_PORT saw:$(sort "$WORK/hostconn.log" | uniq -c | tr -s ' \n' ' ')during ${EG_SEEN_BY[*]:-?})"
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=(egress-host-listeners)
        else
                echo "escape egress-host-listeners: blocked (nothing arrived at the host's listeners on port $EG_PORT: 127.0.0.1, ::1${EG_HOSTADDRS[*]:+, ${EG_HOSTADDRS[*]}})"
                PASSED=$((PASSED + 1))
        fi
else
        echo "note: egress attempts not run: ${EG_NOTE:-no fixture}"
fi

# races against the emulated open
probe toctou-open "$S"
probe symlink-race "$S"

# the emulated path calls (stat, readlink, xattrs, rename, link, ...), under
# a policy that hides a directory the runner binds in: a hidden rule makes
# every path call trapped, and each must answer ENOENT for the hidden file
# however it is spelled or raced; afterwards the host's copy must be as it was
HID_DIR=$SECRET_DIR/hid
mkdir -p "$HID_DIR/secret" && printf '%s\n' "$SECRET" >"$HID_DIR/secret/file" &&
        chmod 755 "$HID_DIR" && chmod 777 "$HID_DIR/secret" && chmod 644 "$HID_DIR/secret/file"
printf '{"filesystem": {"rules": [{"path": "/hid/secret", "access": "hidden"}]}}\n' >"$WORK/hid.policy.json"
HID_BEFORE=$(stat -c '%a %s %h' "$HID_DIR/secret/file" 2>/dev/null; ls -A "$HID_DIR/secret" "$HID_DIR")

# probe_hidden NAME ARGS...: one attempt under the hidden-directory policy
probe_hidden() {
        local name=$1 rc
        shift
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run --policy "$WORK/hid.policy.json" --bind "$HID_DIR:/hid" \
                --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name" "$@" </dev/null >"$out" 2>&1
        rc=$?
        record "hidden /hid/secret" "$name" "$rc" "$out"
}
probe_hidden hidden-paths /hid/secret
probe_hidden rename-race /hid/secret
probe_hidden hidden-link /hid/secret "$S"
probe_hidden chdir-race /hid/secret
N=$((N + 1))
HID_AFTER=$(stat -c '%a %s %h' "$HID_DIR/secret/file" 2>/dev/null; ls -A "$HID_DIR/secret" "$HID_DIR")
if [ "$HID_BEFORE" = "$HID_AFTER" ] && grep -qxF "$SECRET" "$HID_DIR/secret/file"; then
        echo "escape hidden-host-copy: blocked (the hidden file on the host kept its mode, size, links and content; nothing was added beside it)"
        PASSED=$((PASSED + 1))
else
        echo "escape hidden-host-copy: GOT THROUGH (the hidden directory on the host changed: $(printf '%s' "$HID_BEFORE" | tr '\n' ' ')-> $(printf '%s' "$HID_AFTER" | tr '\n' ' '))"
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=(hidden-host-copy)
fi
# exec: natively (no exec rule), the view decides and a foreign binary dies at its first
# syscall; checked (--trap-all), the executed file is the one checked (fs/exec.c,
# sentry/exectrace.c) and a foreign binary never loads
probe exec-i386
probe exec-flip
probe exec-fd-swap
probe_checked() {
        local name=$1 rc
        shift
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 30 "$CORDON" run --trap-all --bind "$BIND:/helpers:ro" -- /helpers/escape-probe "$name" checked \
                </dev/null >"$out" 2>&1
        rc=$?
        record "--trap-all" "$name" "$rc" "$out"
}
probe_checked exec-i386
probe_checked exec-flip
probe_checked exec-fd-swap
# the same i386 ELF where neither the command nor the exec tracer can read
# it: host root's 0711 file in a read-write bind of another user's
# directory (unmapped through the bind's idmap). The tracer reads the
# machine off the stopped process instead (sentry/exectrace.c): it must
# still kill it at its exec event, before its first instruction (a SIGSYS
# or an exit of 42 means it ran).
if [ "$(id -u)" = 0 ]; then
N=$((N + 1))
mkdir -p "$WORK/xonly" && chown 4321:4321 "$WORK/xonly" &&
        printf '\x7f\x45\x4c\x46\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00\x01\x00\x00\x00\x54\x80\x04\x08\x34\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x34\x00\x20\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x80\x04\x08\x00\x80\x04\x08\x60\x00\x00\x00\x60\x00\x00\x00\x05\x00\x00\x00\x00\x10\x00\x00\xb8\x01\x00\x00\x00\xbb\x2a\x00\x00\x00\xcd\x80' \
                >"$WORK/xonly/i386" && chmod 0711 "$WORK/xonly/i386"
# the attempt means something only where the host's kernel runs an i386
# image at all (it exits 42 natively); a kernel without IA32 emulation
# refuses it at exec (ENOEXEC) inside and outside alike
"$WORK/xonly/i386" 2>/dev/null; native_rc=$?
if [ "$native_rc" != 42 ]; then
        echo "note: exec-i386-unreadable not run (this host's kernel runs no i386 image: natively it gave exit $native_rc, not 42)"
else
timeout -k 5 30 "$CORDON" run --trap-all --bind "$WORK/xonly:/x" -- /bin/sh -c '
if [ -r /x/i386 ] || [ ! -x /x/i386 ]; then echo "escape exec-i386-unreadable: ERROR (the file is readable or not executable)"; exit 2; fi
/x/i386; rc=$?
case $rc in
137) echo "escape exec-i386-unreadable: blocked (killed by the exec tracer before it ran)" ;;
42 | 159) echo "escape exec-i386-unreadable: GOT THROUGH (the i386 image ran: exit $rc)"; exit 1 ;;
*) echo "escape exec-i386-unreadable: ERROR (exit $rc)"; exit 2 ;;
esac' </dev/null >"$WORK/out.$N" 2>&1
record "--trap-all" exec-i386-unreadable $? "$WORK/out.$N"
fi
fi

# approvals (issue #10): an approval covers exactly what was asked. In a
# `cordon sandbox` whose policy asks before writes beneath /ask and execs
# beneath /ask-bin, the probe's call waits; the probe rewrites the path
# buffer of the waiting call to name another file the rule covers; the
# runner then approves the request as it was asked. Neither the swapped-in
# write nor the swapped-in exec may happen.
probe_ask() {
        local name=$1 id run req rc=2 i
        N=$((N + 1))
        local out=$WORK/out.$N
        if [ "$(id -u)" != 0 ]; then
                echo "note: $name not run (a sandbox's state under /run/cordon needs root)"
                return
        fi
        mkdir -p "$WORK/ask" "$WORK/askbin" && chmod 777 "$WORK/ask" && chmod 755 "$WORK" "$WORK/askbin"
        rm -f "$WORK/ask/"*
        cp "$BIND/escape-probe" "$WORK/askbin/a" && cp "$BIND/escape-probe" "$WORK/askbin/b" &&
                chmod 755 "$WORK/askbin/a" "$WORK/askbin/b"
        cat >"$WORK/ask.policy.json" <<EOF
{"filesystem": {"binds": [{"source": "$BIND", "target": "/helpers", "readOnly": true},
                          {"source": "$WORK/ask", "target": "/ask"},
                          {"source": "$WORK/askbin", "target": "/ask-bin", "readOnly": true}],
                "rules": [{"path": "/ask", "access": "read-write", "action": "ask"},
                          {"path": "/ask-bin", "access": "read", "exec": true, "action": "ask"}]},
 "approvalTimeoutMs": 20000}
EOF
        id=$(timeout -k 5 30 "$CORDON" sandbox create --policy "$WORK/ask.policy.json" 2>>"$out")
        if [ -z "$id" ]; then
                record "ask rule" "$name" 2 "$out"
                return
        fi
        run=$(timeout -k 5 30 "$CORDON" sandbox exec "$id" --detach -- /helpers/escape-probe "$name" 2>>"$out")
        for i in $(seq 100); do
                req=$(timeout 10 "$CORDON" sandbox pending "$id" --json 2>/dev/null | grep -o '"request":"q[0-9]*"' |
                        head -n 1 | cut -d'"' -f4)
                [ -n "$req" ] && break
                sleep 0.1
        done
        sleep 1.5 # the probe swaps its buffer 1 s after the call started waiting
        if [ -n "$req" ]; then
                timeout 10 "$CORDON" sandbox approve "$id" "$req" >>"$out" 2>&1
        else
                echo "no request became pending (run $run)" >>"$out"
        fi
        for i in $(seq 200); do
                timeout 10 "$CORDON" sandbox events "$id" --json 2>/dev/null | grep -q '"type":"run_exited"' && break
                sleep 0.1
        done
        rc=$(timeout 10 "$CORDON" sandbox events "$id" --json 2>/dev/null | grep '"type":"run_exited"' |
                grep -o '"exitCode":[0-9]*' | head -n 1 | cut -d: -f2)
        timeout 10 "$CORDON" sandbox events "$id" --json 2>/dev/null | grep '"type":"output"' |
                grep -o '"text":"escape [^"]*' | cut -d'"' -f4 >>"$out"
        timeout -k 5 30 "$CORDON" sandbox terminate "$id" >/dev/null 2>&1
        if [ -e "$WORK/ask/swapped" ]; then
                echo "escape $name: GOT THROUGH (/ask/swapped exists on the host)" >>"$out"
                rc=1
        fi
        record "ask rule, approved after the path was swapped" "$name" "${rc:-2}" "$out"
}
probe_ask ask-swap-open
probe_ask ask-swap-exec

# an ask rule's write from a directory the sentry's worker may not search
# (another user's 0700 directory, which root's capabilities enter): the
# worker could not pin the file to ask about, took the open for one that
# fails anyway, and the proc agent then opened it with root's capabilities,
# unasked. Nobody can approve here, so every asked write is denied.
N=$((N + 1))
printf '{"filesystem": {"rules": [{"path": "/tmp/ask/u/f", "access": "read-write", "action": "ask"}]}}\n' \
        >"$WORK/ask-unsearchable.json"
timeout -k 5 30 "$CORDON" run --policy "$WORK/ask-unsearchable.json" -- /bin/sh -c '
mkdir -p /tmp/x/u && echo orig > /tmp/x/u/f && chown -R 1000:1000 /tmp/x/u && chmod 700 /tmp/x/u &&
        mv /tmp/x /tmp/ask || { echo "escape ask-unsearchable-dir: ERROR (set-up failed)"; exit 2; }
echo changed > /tmp/ask/u/f 2>/dev/null
if [ "$(cat /tmp/ask/u/f)" != orig ]; then
        echo "escape ask-unsearchable-dir: GOT THROUGH (a write the ask rule covers went unasked)"; exit 1
fi
echo "escape ask-unsearchable-dir: blocked (the write beneath a 0700 directory of uid 1000 was asked about, and denied)"' \
        </dev/null >"$WORK/out.$N" 2>&1
record "" ask-unsearchable-dir $? "$WORK/out.$N"

# written into other processes, and the process model (issue #9)
probe process-vm-writev
probe proc-mem-write
probe proc-mem-write-race
probe ptrace-sibling
probe personality
# a fork bomb under --pids 64 (the limit itself: fork_bomb_bounded in
# tests/integration/limits.sh); the host must still fork afterwards
N=$((N + 1))
timeout -k 5 30 "$CORDON" run --pids 64 --bind "$BIND:/helpers:ro" -- /helpers/escape-probe fork-bomb \
        </dev/null >"$WORK/out.$N" 2>&1
rc=$?
if ! /bin/sh -c true; then
        echo "escape fork-bomb: GOT THROUGH (the host cannot fork after the attempt)" >>"$WORK/out.$N"
        rc=1
fi
record "--pids 64" fork-bomb "$rc" "$WORK/out.$N"

# another sandbox, running: sandbox 1 holds a secret in its /tmp and
# /dev/shm, an abstract socket and a SysV segment; sandbox 2 looks for them
chmod 755 "$WORK"
OS_DIR=$WORK/other && mkdir -p "$OS_DIR" && chmod 777 "$OS_DIR"
OS_TOKEN="cordon-other-$(rand)"
OS_SECRET="cordon-other-secret-$(rand)"
OS_KEY=$((0x5a000000 + RANDOM))
timeout -k 5 120 "$CORDON" run --bind "$BIND:/helpers:ro" --bind "$OS_DIR:/scratch" -- \
        /helpers/escape-probe hold-secrets "$OS_TOKEN" "$OS_SECRET" "$OS_TOKEN" "$OS_KEY" /scratch/ready \
        </dev/null >"$WORK/other.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
        [ -s "$OS_DIR/ready" ] && break
        sleep 0.1
done
OS_HOSTPID=
for p in /proc/[0-9]*; do
        if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "^/helpers/escape-probe hold-secrets $OS_TOKEN "; then
                OS_HOSTPID=${p#/proc/}
                PIDS+=("$OS_HOSTPID")
                break
        fi
done
if [ -n "$OS_HOSTPID" ]; then
        probe other-sandbox "$OS_HOSTPID" "$OS_TOKEN" "$OS_TOKEN" "$OS_KEY"
        kill -0 "$OS_HOSTPID" 2>/dev/null || echo "    (note: sandbox 1 was gone after the attempt)"
        kill "$OS_HOSTPID" 2>/dev/null
else
        N=$((N + 1))
        echo "escape other-sandbox: FAILED (sandbox 1 did not start: $(head -c 200 "$WORK/other.out"))"
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=(other-sandbox)
fi
if grep -rqaF "$OS_SECRET" "$WORK"/out.* 2>/dev/null; then
        echo "escape other-sandbox-output: GOT THROUGH (sandbox 1's secret appears in sandbox 2's output)"
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=(other-sandbox-output)
fi

# --- snapshot archives at restore (issue #9) --------------------------------
#
# `sandbox create --from-snapshot` with hostile archives (their digest given, so they are
# restored): symlinks the archive makes and then writes through, symlinks and magic links to
# host paths, hard links to what such a link reaches, "..", absolute names; for a template root
# also upper/ entries, whiteouts and opaque markers aimed through a symlink at the host. The
# restore runs confined in the new sandbox's view as its user: nothing may be written, removed
# or linked on the host, and nothing of the host may be read back from the sandbox.
SNAP_TPL=
SNAP_TPL_POLICY=
snap_template() {
        local t=$WORK/snap-tpl p lib
        mkdir -p "$t/usr/bin" "$t/usr/lib/x86_64-linux-gnu" "$t/usr/lib64" "$t/etc" "$t/data" || return 1
        ln -s usr/bin "$t/bin" && ln -s usr/lib "$t/lib" && ln -s usr/lib64 "$t/lib64" || return 1
        for p in sh cat ls; do
                cp -L "$(command -v "$p")" "$t/usr/bin/$p" || return 1
                for lib in $(ldd "$t/usr/bin/$p" 2>/dev/null | grep -o '/[^ ]*'); do
                        case $lib in
                        */ld-linux*) cp -Ln "$lib" "$t/usr/lib64/" ;;
                        *) cp -Ln "$lib" "$t/usr/lib/x86_64-linux-gnu/" ;;
                        esac || return 1
                done
        done
        echo data >"$t/data/file"
        chmod -R go+rX "$t" && chmod 755 "$WORK"
        SNAP_TPL=$t
        SNAP_TPL_POLICY=$WORK/snap-tpl.json
        printf '{"source": {"kind": "template", "path": "%s", "digest": "%s"}}\n' "$t" \
                "$("$CORDON" digest "$t")" >"$SNAP_TPL_POLICY"
}

# the host's side of the secret: its directory's entries, the file's content and link count
snap_host_state() {
        ls -A "$SECRET_DIR"
        stat -c '%h %s' "$SECRET_FILE"
        cat "$SECRET_FILE"
        cat /proc/sys/kernel/hostname
}

# snap_attempt NAME template|default READ-BACK-PATHS ENTRIES-JSON
snap_attempt() {
        local name=$1 root=$2 readback=$3 entries=$4 arc digest id rc out before after pol=()
        N=$((N + 1))
        out=$WORK/out.$N
        arc=$WORK/snap-$name.tar
        if [ "$root" = template ]; then
                [ -n "$SNAP_TPL" ] || {
                        echo "escape snapshot-$name: skipped (no template could be built)"
                        return
                }
                pol=(--policy "$SNAP_TPL_POLICY")
        fi
        "$PYTHON" - "$arc" "$entries" "$root" "${SNAP_TPL:-}" "$("$CORDON" digest "${SNAP_TPL:-/nonexistent}" 2>/dev/null)" <<'PY' ||
import io, json, sys, tarfile
arc, entries, root, tpl, tdigest = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rec = {"policy": "{}"}
if root == "template":
    rec["template"] = {"path": tpl, "digest": tdigest}
with tarfile.open(arc, "w", format=tarfile.PAX_FORMAT) as t:
    blob = json.dumps(rec).encode()
    ti = tarfile.TarInfo("cordon/sandbox.json"); ti.size = len(blob)
    t.addfile(ti, io.BytesIO(blob))
    for kind, name, arg in entries:
        ti = tarfile.TarInfo(name)
        data = None
        if kind == "file":
            data = arg.encode(); ti.size = len(data); ti.mode = 0o644
        elif kind == "dir":
            ti.type = tarfile.DIRTYPE; ti.mode = 0o755
        elif kind == "symlink":
            ti.type = tarfile.SYMTYPE; ti.linkname = arg
        elif kind == "hardlink":
            ti.type = tarfile.LNKTYPE; ti.linkname = arg
        t.addfile(ti, io.BytesIO(data) if data is not None else None)
PY
                {
                        echo "escape snapshot-$name: FAILED (cannot build the archive)"
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("snapshot-$name")
                        return
                }
        zstd -q -f --rm "$arc" -o "$arc.zst" || return
        digest="sha256:$(sha256sum <"$arc.zst" | cut -d' ' -f1)"
        before=$(snap_host_state)
        id=$(timeout -k 5 60 "$CORDON" sandbox create "${pol[@]}" --from-snapshot "$arc.zst" --digest "$digest" \
                2>"$out.err")
        rc=$?
        {
                echo "create exit $rc: $(grep -v -F "$SECRET" "$out.err" | head -n 3 | tr '\n' ' ')"
                if [ "$rc" = 0 ]; then
                        timeout -k 5 30 "$CORDON" sandbox exec "$id" -- sh -c \
                                "for f in $readback; do echo \"== \$f\"; cat \"\$f\" 2>&1; ls -A \"\$f\" 2>&1; done"
                        timeout -k 5 30 "$CORDON" sandbox terminate "$id" >/dev/null 2>&1
                fi
        } >"$out" 2>&1
        after=$(snap_host_state)
        local why=
        [ "$before" = "$after" ] || why="the host's secret directory or file changed"
        grep -qaF "$SECRET" "$out" && why="${why:+$why; }the host's secret was read back in the sandbox"
        if [ -z "$why" ]; then
                echo "escape snapshot-$name: blocked ($([ "$rc" = 0 ] && echo "restored" || echo "restore refused"); nothing on the host written, removed or read)" >>"$out"
        else
                echo "escape snapshot-$name: GOT THROUGH ($why)" >>"$out"
        fi
        record "" "snapshot-$name" 0 "$out"
}

if [ "$(id -u)" = 0 ] && [ -n "$PYTHON" ] && command -v zstd >/dev/null; then
        snap_template || SNAP_TPL=
        D=$SECRET_DIR
        snap_attempt symlink-dir default "/tmp/a /tmp/a/planted" \
                '[["symlink", "layer/tmp/a", "'"$D"'"], ["file", "layer/tmp/a/planted", "x"]]'
        snap_attempt symlink-file default "/tmp/s" \
                '[["symlink", "layer/tmp/s", "'"$S"'"], ["file", "layer/tmp/s", "overwritten"]]'
        snap_attempt magic-link default "/tmp/m /tmp/m/planted /tmp/p" \
                '[["symlink", "layer/tmp/m", "/proc/1/root'"$D"'"], ["file", "layer/tmp/m/planted", "x"],
                  ["symlink", "layer/tmp/p", "/proc/self/root'"$D"'"], ["file", "layer/tmp/p/planted", "x"]]'
        snap_attempt hardlink-through-symlink default "/tmp/h /tmp/h2" \
                '[["symlink", "layer/tmp/a", "'"$D"'"], ["hardlink", "layer/tmp/h", "layer/tmp/a/secret"],
                  ["symlink", "layer/tmp/s", "'"$S"'"], ["hardlink", "layer/tmp/h2", "layer/tmp/s"]]'
        snap_attempt dotdot default "/tmp" \
                '[["file", "layer/tmp/../../../../..'"$D"'/planted", "x"],
                  ["hardlink", "layer/tmp/h", "layer/tmp/../../../../..'"$S"'"]]'
        snap_attempt absolute default "/tmp" \
                '[["file", "'"$D"'/planted", "x"], ["hardlink", "layer/tmp/h", "'"$S"'"]]'
        snap_attempt upper-symlink-dir template "/etc/a /etc/a/planted /etc/h" \
                '[["symlink", "upper/etc/a", "'"$D"'"], ["file", "upper/etc/a/planted", "x"],
                  ["hardlink", "upper/etc/h", "upper/etc/a/secret"]]'
        snap_attempt upper-whiteout-through-symlink template "/x /y" \
                '[["symlink", "upper/x", "'"$D"'"], ["file", "upper/x/.wh.secret", ""],
                  ["symlink", "upper/y", "'"$D"'"], ["file", "upper/y/.wh..wh..opq", ""]]'
        snap_attempt upper-dotdot template "/etc" \
                '[["file", "upper/../../../..'"$D"'/planted", "x"]]'
        snap_attempt upper-mount-points template "/proc/sys/kernel/hostname /tmp/x" \
                '[["file", "upper/proc/sys/kernel/hostname", "pwned"], ["file", "upper/tmp/x", "x"],
                  ["file", "upper/proc/.wh.sys", ""]]'
else
        echo "escape snapshot-*: skipped (needs root, python3 and zstd)"
fi

# --- the same with the sandbox's own tools ---------------------------------

shell sh-cat-secret "
r=blocked
for f in '$S' '/proc/1/root$S' '/proc/self/root/../../..$S' '/proc/1/cwd/../../..$S' \
         '/tmp/../../..$S' '/dev/fd/7' '/proc/self/fd/7' '/proc/self/fd/8/secret'; do
        if cat \"\$f\" 2>/dev/null; then r='GOT THROUGH'; got=\"\$got \$f\"; fi
done
if ls '${SECRET_DIR}' >/dev/null 2>&1; then r='GOT THROUGH'; got=\"\$got ls-dir\"; fi
if [ \"\$r\" = blocked ]; then
        echo 'escape sh-cat-secret: blocked (cat of the host path, via /proc/1/root, /proc/self/root/.., /proc/1/cwd, /tmp/.., fd 7, fd 8: all failed)'
else
        echo \"escape sh-cat-secret: GOT THROUGH (read:\$got)\"; exit 1
fi"

shell sh-env-dump "
env; cat /proc/self/environ; cat /proc/1/environ; for p in /proc/[0-9]*; do cat \$p/environ; done
echo
echo 'escape sh-env-dump: blocked (env, /proc/*/environ dumped; the runner checks the output for the secret)'
" 2>/dev/null

if [ -x /usr/bin/python3 ]; then
        shell py-read-secret "exec /usr/bin/python3 - '$S' '$SECRET_DIR' <<'EOF'
import os, sys, glob
secret, d = sys.argv[1], sys.argv[2]
got = []
cands = [secret, '/proc/1/root' + secret, '/proc/self/root/../../..' + secret,
         '/proc/1/cwd/../..' + secret, '/../../../..' + secret]
cands += [p + '/root' + secret for p in glob.glob('/proc/[0-9]*')]
for c in cands:
    try:
        with open(c) as f:
            f.read(); got.append(c)
    except OSError:
        pass
for dirpath in (d, '/proc/1/root' + d):
    try:
        os.listdir(dirpath); got.append('listdir ' + dirpath)
    except OSError:
        pass
# a walk of everything the view holds, looking for the secret's directory name
name = os.path.basename(d)
for root, dirs, files in os.walk('/', topdown=True):
    if root == '/' :
        dirs[:] = [x for x in dirs if x not in ('proc', 'dev')]
    if name in dirs or name in files:
        got.append('found ' + os.path.join(root, name))
if got:
    print('escape py-read-secret: GOT THROUGH (' + ', '.join(got) + ')'); sys.exit(1)
print('escape py-read-secret: blocked (%d paths tried, the view walked: no secret, no secret directory)' % len(cands))
EOF"
fi

if [ -x /bin/bash ] || [ -x /usr/bin/bash ]; then
        if [ -n "$PORT" ]; then
                shell bash-dev-tcp "
exec /bin/bash -c 'if timeout 3 bash -c \"exec 3<>/dev/tcp/127.0.0.1/$PORT && head -n1 <&3\" 2>/dev/null | grep -q host-tcp-banner; then
        echo \"escape bash-dev-tcp: GOT THROUGH (reached the host server on 127.0.0.1:$PORT)\"; exit 1
fi
echo \"escape bash-dev-tcp: blocked (/dev/tcp/127.0.0.1/$PORT reached no host server)\"'"
        fi
fi

# The host's device nodes, bound into the view, keep their host metadata. A peer sandbox can
# leave one owned by the uid a cordon sandbox runs as (runsc's `do` leaves /dev/null to nobody,
# which is the sandbox's root when cordon runs as root): the sandbox must still not change the
# host node's mode, owner or times. /dev/full stands in, owned by 65534 for this attempt only;
# the chmod asks for the mode it already has, so getting through changes nothing but its ctime.
if [ "$(id -u)" = 0 ] && [ -c /dev/full ]; then
        DEVFULL_OWNER=$(stat -c %u:%g /dev/full)
        chown 65534:65534 /dev/full
        DEVFULL_MODE=$(stat -c %a /dev/full)
        shell dev-node-metadata "
got=
chmod $DEVFULL_MODE /dev/full 2>/dev/null && got=\"\$got chmod\"
chown 0:0 /dev/full 2>/dev/null && got=\"\$got chown\"
touch /dev/full 2>/dev/null && got=\"\$got utimes\"
if [ -n \"\$got\" ]; then echo \"escape dev-node-metadata: GOT THROUGH (host /dev/full:\$got)\"; exit 1; fi
echo 'escape dev-node-metadata: blocked (chmod, chown and touch of /dev/full, owned on the host by the sandbox uid: all refused)'"
        chown "$DEVFULL_OWNER" /dev/full
fi

# The privileged redo paths: the proc agent redoes a directory change or a
# walk the worker was refused with the caller's ids and capabilities
# (fs/agent.c, fs/resolve.c), and the sentry reopens the caller's own fd
# (/proc/self/fd/N, /dev/stdout) with CAP_DAC_OVERRIDE on its duplicate of
# that open file (fs/open.c). tests/escape/redo.py's attempts, in one sandbox
# per configuration (--trap-all and the policy's rules; the rules alone; the
# default policy, where rename and the reopen's first open run natively),
# each attempt named on its own line. Host fixtures: a hidden directory with
# the secret, a read-only 0555 bind, and a read-write bind holding files and
# a FIFO of a host user the sandbox does not map (uid 12345). Afterwards the
# host side must be as it was: nothing in the hidden directory or the
# read-only bind changed, no device, setuid or setgid node in either bind,
# the other user's file unwritten (checked as redo-host).
REDO_PY=$TESTS_SRCDIR/escape/redo.py
if [ -n "$PYTHON" ] && [ "$(id -u)" = 0 ] && [ -f "$REDO_PY" ]; then
        R=$WORK/redo
        mkdir -p "$R/py" "$R/hid/secret" "$R/hid/d555" "$R/ro/sub" "$R/rw/d555" && cp "$REDO_PY" "$R/py/" &&
                printf '%s\n' "$SECRET" >"$R/hid/secret/file" && chmod 777 "$R/hid/secret" &&
                chmod 555 "$R/hid/d555" && echo a >"$R/ro/a" && chmod 555 "$R/ro" &&
                touch "$R/rw/mine" "$R/rw/d555/mine" && chmod 555 "$R/rw/d555" && echo orig >"$R/rw/theirs" &&
                printf '%s\n' "$SECRET" >"$R/rw/theirs600" && chmod 600 "$R/rw/theirs600" &&
                mkfifo -m 644 "$R/rw/fifo" && chown 12345:12345 "$R/rw/theirs" "$R/rw/theirs600" "$R/rw/fifo" &&
                chmod 755 "$R" "$R/py" "$R/rw"
        printf '{"filesystem": {"rules": [{"path": "/hid/secret", "access": "hidden"},
  {"path": "/tmp/ask/in", "access": "read-write", "action": "ask"}]}}\n' >"$R/policy.json"
        redo_state() {
                # (rw/d555/sd: dirop-setid's mkdir there may succeed, as natively)
                (cd "$R" && find hid ro rw -path rw/d555/sd -prune -o -printf '%p %m %u %s %y\n' | sort &&
                        sha256sum hid/secret/file rw/theirs ro/a)
        }
        REDO_BEFORE=$(redo_state)
        # run_redo TAG ATTEMPTS -- CORDON-RUN-OPTIONS...
        run_redo() {
                local tag=$1 attempts=$2 a rc
                shift 3
                N=$((N + 1))
                timeout -k 5 60 "$CORDON" run "$@" --bind "$R/ro:/ro:ro" --bind "$R/rw:/rw" --bind "$R/py:/py:ro" \
                        -- python3 /py/redo.py $attempts </dev/null >"$WORK/out.$N" 2>&1
                rc=$?
                for a in $attempts; do
                        record "$tag" "$a" "$rc" "$WORK/out.$N"
                done
        }
        REDO_ALL="dirop-device dirop-hidden dirop-swap dirop-names dirop-ro-bind dirop-setid dirop-nonroot
walk-hidden walk-nonroot walk-ask reopen-write reopen-kinds reopen-other reopen-race"
        run_redo "--trap-all, hidden and ask rules" "$REDO_ALL" -- --trap-all --policy "$R/policy.json" \
                --bind "$R/hid:/hid"
        run_redo "hidden and ask rules" "${REDO_ALL//dirop-swap/}" -- --policy "$R/policy.json" --bind "$R/hid:/hid"
        run_redo "default policy" "dirop-device dirop-setid walk-nonroot reopen-write reopen-kinds reopen-race" --
        N=$((N + 1))
        REDO_AFTER=$(redo_state)
        if [ "$REDO_AFTER" = "$REDO_BEFORE" ] &&
                [ -z "$(find "$R/hid" "$R/ro" "$R/rw" -perm /6000 -o -type b -o -type c)" ]; then
                echo "escape redo-host: blocked (the hidden directory, the read-only bind and the other user's files are as they were; no device, setuid or setgid node in a bind)"
                PASSED=$((PASSED + 1))
        else
                echo "escape redo-host: GOT THROUGH (the host side changed: $(diff <(printf '%s\n' "$REDO_BEFORE") <(printf '%s\n' "$REDO_AFTER") | grep '^[<>]' | head -n 5 | tr '\n' ' '))"
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=(redo-host)
        fi
else
        echo "note: the redo attempts not run (they need root and python3)"
fi

# --- the secrets must appear in no output --------------------------------

N=$((N + 1))
if grep -rqaF -e "$SECRET" -e "$ENV_SECRET" "$WORK"/out.* 2>/dev/null; then
        where=$(grep -rlaF -e "$SECRET" -e "$ENV_SECRET" "$WORK"/out.* | wc -l)
        echo "escape secret-in-output: GOT THROUGH (a secret appears in the output of $where sandbox run(s))"
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=(secret-in-output)
else
        echo "escape secret-in-output: blocked (neither the file secret nor the env secret appears in any of $((N - 1)) sandbox outputs)"
        PASSED=$((PASSED + 1))
fi

# --- no host file changed while the attempts ran -------------------------

N=$((N + 1))
HOST_AFTER=$(host_canary)
if [ "$HOST_AFTER" != "$HOST_BEFORE" ]; then
        echo "escape host-files: GOT THROUGH (changed during the attempts: $(diff <(printf '%s\n' "$HOST_BEFORE") <(printf '%s\n' "$HOST_AFTER") | grep '^>' | cut -c3- | cut -d' ' -f1 | tr '\n' ' '))"
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=(host-files)
else
        echo "escape host-files: blocked ($(printf '%s\n' "$HOST_BEFORE" | wc -l) host files unchanged: $(printf '%s\n' "$HOST_BEFORE" | cut -d' ' -f1 | tr '\n' ' '))"
        PASSED=$((PASSED + 1))
fi

echo "# $N attempts in $(($(date +%s) - START))s${FAILED_NAMES[0]:+; failed: ${FAILED_NAMES[*]}}"
summary
[ "$FAILED" -eq 0 ]
