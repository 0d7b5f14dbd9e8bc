#!/bin/bash
# bench/ports.sh: a sandbox's exposed port (`cordon sandbox port`, forwarded by its sentry with
# splice) side by side with a direct loopback connection on the host: the same python3 server
# (in the sandbox, and on the host) and the same client, alternating, REPS times each way:
#
#   out   the server sends N MiB, the client on the host reads them
#   in    the client sends N MiB, the server reads them and answers with the count
#
# Prints a markdown table of medians (MiB/s) and the forwarded/direct ratio. Needs root and
# python3. On a host with few cores the forwarder's thread competes with both ends for a core:
# give it as many idle cores as you can.
#
#   CORDON=build/cordon bench/ports.sh [-n REPS] [--mib N]
set -u
REPS=5
MIB=1024
while [ $# -gt 0 ]; do
        case $1 in
        -n) REPS=$2; shift ;;
        --mib) MIB=$2; shift ;;
        *) echo "usage: bench/ports.sh [-n REPS] [--mib N]" >&2; exit 2 ;;
        esac
        shift
done
CORDON=${CORDON:-$(command -v cordon)}
[ -x "$CORDON" ] || { echo "CORDON must name the cordon binary" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/ports.sh needs root (a long-lived sandbox)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "bench/ports.sh needs python3" >&2; exit 77; }

TMP=$(mktemp -d)
ID=
HOSTSRV=
cleanup() {
        [ -n "$HOSTSRV" ] && kill "$HOSTSRV" 2>/dev/null
        [ -n "$ID" ] && "$CORDON" sandbox terminate "$ID" >/dev/null 2>&1
        rm -rf "$TMP"
}
trap cleanup EXIT

cat >"$TMP/srv.py" <<'PY'
import socket, sys, threading
def handle(c):
    try:
        f = c.makefile("rb")
        cmd, n = f.readline().split()
        n = int(n)
        if cmd == b"send":
            buf = memoryview(b"\0" * (1 << 20))
            while n > 0:
                n -= c.send(buf[: min(n, len(buf))])
        else:
            got = 0
            while got < n:
                d = f.read1(1 << 20)
                if not d:
                    break
                got += len(d)
            c.sendall(b"%d\n" % got)
    except Exception:
        pass
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
while True:
    threading.Thread(target=handle, args=(s.accept()[0],), daemon=True).start()
PY
cat >"$TMP/cli.py" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
mode, n = sys.argv[2], int(sys.argv[3])
c = socket.create_connection((host, int(port)))
t = time.monotonic()
if mode == "out":
    c.sendall(b"send %d\n" % n)
    got, buf = 0, bytearray(1 << 20)
    while True:
        k = c.recv_into(buf)
        if not k:
            break
        got += k
else:
    c.sendall(b"recv %d\n" % n)
    buf, left = memoryview(b"\0" * (1 << 20)), n
    while left > 0:
        left -= c.send(buf[: min(left, len(buf))])
    got = int(c.makefile("rb").readline())
dt = time.monotonic() - t
assert got == n, (got, n)
print("%.0f" % (n / dt / 2**20))
PY

ID=$("$CORDON" sandbox create --ttl 30m) || exit 1
"$CORDON" sandbox put "$ID" "$TMP/srv.py" /tmp/srv.py || exit 1
"$CORDON" sandbox exec "$ID" --detach -- python3 /tmp/srv.py 5000 >/dev/null || exit 1
python3 "$TMP/srv.py" 5301 &
HOSTSRV=$!
FWD=$("$CORDON" sandbox port "$ID" 5000) || exit 1
for i in $(seq 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', 5301)).close()" 2>/dev/null &&
                python3 "$TMP/cli.py" "$FWD" out 1 >/dev/null 2>&1 && break
        sleep 0.1
done
N=$((MIB * 1024 * 1024))
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for mode in out in; do
        : >"$TMP/direct.$mode"
        : >"$TMP/fwd.$mode"
        for _ in $(seq "$REPS"); do
                python3 "$TMP/cli.py" 127.0.0.1:5301 "$mode" "$N" >>"$TMP/direct.$mode"
                python3 "$TMP/cli.py" "$FWD" "$mode" "$N" >>"$TMP/fwd.$mode"
        done
done
echo "| $MIB MiB, median of $REPS | direct loopback | forwarded (cordon sandbox port) | ratio |"
echo "| --- | --- | --- | --- |"
for mode in out in; do
        d=$(median <"$TMP/direct.$mode")
        f=$(median <"$TMP/fwd.$mode")
        echo "| $mode | $d MiB/s | $f MiB/s | $(awk -v f="$f" -v d="$d" 'BEGIN {printf "%.2f", f / d}') |"
done
echo "($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
