#!/bin/bash
# bench/broker.sh: HTTPS through cordon's gate, side by side with a direct connection: curl's
# TLS handshake time (time_appconnect - time_connect) and download/upload throughput, for
#
#   direct       curl on the host, straight to the upstream
#   passthrough  curl in `cordon run`, the host listed (the relay checks the ClientHello, then
#                splices the bytes)
#   terminated   curl in `cordon run` with a credential grant for the host: the gate terminates
#                TLS with the sandbox's CA, opens its own to the upstream, swaps the secret in
#
# The upstream is python3's ssl HTTP server in a network namespace made here (veth,
# 10.213.201.1/30 on the host, .2 inside; a test CA made with openssl), serving /bytes/N and
# taking POST /sink. Needs root, ip(8), openssl, curl, python3. Prints a markdown table of medians.
# Each mode's handshakes, download and upload are runs of their own, and the CPU time each run
# costs is shown per GiB moved, apart for the clients (under cordon with the sentry and its gate)
# and for the upstream: on 2 shared cores the three parties of a terminated connection (client,
# gate, upstream) share the CPU, and what each costs per GiB says more than MB/s, which the other
# load on the host moves.
#
#   CORDON=build/cordon bench/broker.sh [-n REPS] [--mib N]
set -u
REPS=5
MIB=256
while [ $# -gt 0 ]; do
        case $1 in
        -n) REPS=$2; shift ;;
        --mib) MIB=$2; shift ;;
        *) echo "usage: bench/broker.sh [-n REPS] [--mib N]" >&2; exit 2 ;;
        esac
        shift
done
CORDON=${CORDON:-$(command -v cordon)}
[ -x "$CORDON" ] || { echo "CORDON must name the cordon binary" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/broker.sh needs root (a network namespace)" >&2; exit 77; }
for t in ip openssl curl python3; do
        command -v $t >/dev/null || { echo "bench/broker.sh needs $t" >&2; exit 77; }
done
if ip -o addr show | grep -q ' 10\.213\.201\.'; then
        echo "10.213.201.0/24 is in use on this host" >&2
        exit 77
fi
HOST=up.bench.test
DIR=$(mktemp -d /var/tmp/cordon-broker-bench.XXXXXX)
chmod 0755 "$DIR"
NS=cbrk$$
cleanup() {
        [ -n "${UP:-}" ] && kill "$UP" 2>/dev/null
        ip netns del "$NS" 2>/dev/null
        ip link del cbrkh$$ 2>/dev/null
        rm -rf "$DIR"
}
trap cleanup EXIT

(cd "$DIR" &&
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
                -days 2 -subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE \
                -addext keyUsage=critical,keyCertSign &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key -out srv.csr \
                -subj "/CN=$HOST" &&
        printf 'subjectAltName=DNS:%s\n' "$HOST" >ext.cnf &&
        openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 \
                -extfile ext.cnf) >"$DIR/openssl.log" 2>&1 || { echo "openssl failed" >&2; exit 1; }
chmod 0644 "$DIR/ca.pem"
# the clients all verify against a bundle of the same size (the host's CAs and the test CA), as
# the terminated mode's does (the view's bundle and the sandbox's CA): curl reads it during the
# handshake, and a one-certificate file would flatter the other two
cat /etc/ssl/certs/ca-certificates.crt "$DIR/ca.pem" >"$DIR/bundle.pem" 2>/dev/null || cp "$DIR/ca.pem" "$DIR/bundle.pem"
chmod 0644 "$DIR/bundle.pem"
cat >"$DIR/up.py" <<'EOF'
import http.server, ssl, sys
CHUNK = b"\0" * (1 << 20)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        n = int(self.path.rsplit("/", 1)[1]) if self.path.startswith("/bytes/") else 0
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        while n > 0:
            k = min(n, len(CHUNK))
            self.wfile.write(CHUNK[:k])
            n -= k
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        while n > 0:
            n -= len(self.rfile.read(min(n, 1 << 20)))
        self.send_response(204)
        self.end_headers()
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s = http.server.ThreadingHTTPServer(("10.213.201.2", 443), H)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(sys.argv[3], "w").write("ready")
s.serve_forever()
EOF
ip netns add "$NS" && ip link add cbrkh$$ type veth peer name cbrkn$$ && ip link set cbrkn$$ netns "$NS" &&
        ip addr add 10.213.201.1/30 dev cbrkh$$ && ip link set cbrkh$$ up &&
        ip -n "$NS" addr add 10.213.201.2/30 dev cbrkn$$ && ip -n "$NS" link set cbrkn$$ up &&
        ip -n "$NS" link set lo up || { echo "cannot make the namespace" >&2; exit 1; }
ip netns exec "$NS" python3 "$DIR/up.py" "$DIR/srv.pem" "$DIR/srv.key" "$DIR/ready" 2>"$DIR/up.log" &
UP=$!
for _ in $(seq 100); do [ -e "$DIR/ready" ] && break; sleep 0.05; done
[ -e "$DIR/ready" ] || { echo "the upstream did not start" >&2; exit 1; }

echo "$HOST 10.213.201.2" >"$DIR/hosts"
head -c $((MIB << 20)) /dev/zero >"$DIR/up.bin"
chmod 0644 "$DIR/up.bin"
(umask 077 && echo "bench-secret-$RANDOM$RANDOM" >"$DIR/secret")
net='"rules": [{"host": "'$HOST'", "port": 443, "reason": "bench"}],
     "testing": {"hostsFile": "'$DIR/hosts'", "allowPrivateNetworks": ["10.213.201.0/30"], "upstreamCaFile": "'$DIR/ca.pem'"}'
echo '{"networkPolicy": {"mode": "allow-listed", '"$net"'}}' >"$DIR/pass.json"
echo '{"networkPolicy": {"mode": "allow-listed", '"$net"'},
  "credentials": [{"env": "T", "host": "'$HOST'", "source": {"file": "'$DIR/secret'"}, "reason": "bench"}]}' \
        >"$DIR/term.json"

# one measurement inside the mode, by phase ($1): h, 10 handshakes ("h us" lines, and hs.py's
# "p" lines); d, a download ("d MB/s"); u, an upload ("u MB/s"); n, nothing (what a run of the
# mode costs without a transfer, taken from the transfers' CPU)
cat >"$DIR/measure.sh" <<EOF
set -e
url=https://$HOST
ca=\${CA:+--cacert \$CA}
auth="Authorization: Bearer \${T:-none}"
case \$1 in
n) ;;
h)
# 11 full handshakes in one curl (the first, which reads the CA bundle, is dropped): a new
# connection each (Connection: close), no session resumption
urls=""
for i in 0 1 2 3 4 5 6 7 8 9 10; do urls="\$urls \$url/bytes/1"; done
curl -sS \$ca \$RESOLVE --no-sessionid -H "Connection: close" -H "\$auth" \
        -w 'h %{time_connect} %{time_appconnect} %{time_namelookup}\n' -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
        -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null \$urls | tail -n +2
python3 $DIR/hs.py "\${CA:-}" "\${ADDR:-}" "\${T:-none}" ;;
d) curl -sS \$ca \$RESOLVE -H "\$auth" -o /dev/null -w 'd %{speed_download}\n' \$url/bytes/$((MIB << 20)) ;;
u) curl -sS \$ca \$RESOLVE -H "\$auth" -H "Expect:" --data-binary @$DIR/up.bin -o /dev/null -w 'u %{speed_upload}\n' \$url/sink ;;
esac
EOF
# connect, handshake and first response, timed inside one python3 process (its CA store loaded
# once, as a long-lived client's is): 21 connections, the first dropped, no session resumption;
# "p CONNECT_US HANDSHAKE_US RESPONSE_US", each from the connection's start
cat >"$DIR/hs.py" <<EOF
import socket, ssl, sys, time
ca, addr, tok = sys.argv[1:4]
host = "$HOST"
ctx = ssl.create_default_context(cafile=ca or None)
ip = addr or socket.getaddrinfo(host, 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
req = ("GET /bytes/1 HTTP/1.1\\r\\nHost: %s\\r\\nAuthorization: Bearer %s\\r\\nConnection: close\\r\\n\\r\\n" % (host, tok)).encode()
for i in range(21):
    t0 = time.perf_counter()
    s = socket.create_connection((ip, 443))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t1 = time.perf_counter()
    t = ctx.wrap_socket(s, server_hostname=host)
    t2 = time.perf_counter()
    t.sendall(req)
    t.recv(1)
    t3 = time.perf_counter()
    t.close()
    if i:
        print("p %.0f %.0f %.0f" % ((t1 - t0) * 1e6, (t2 - t0) * 1e6, (t3 - t0) * 1e6))
EOF
run_mode() { # MODE PHASE
        case $1 in
        direct) CA=$DIR/bundle.pem ADDR=10.213.201.2 RESOLVE="--resolve $HOST:443:10.213.201.2" sh "$DIR/measure.sh" "$2" ;;
        passthrough) "$CORDON" run --policy "$DIR/pass.json" --bind "$DIR:$DIR:ro" -- \
                env CA="$DIR/bundle.pem" RESOLVE= sh "$DIR/measure.sh" "$2" 2>/dev/null ;;
        terminated) "$CORDON" run --policy "$DIR/term.json" --bind "$DIR:$DIR:ro" -- \
                env RESOLVE= sh "$DIR/measure.sh" "$2" 2>/dev/null ;;
        esac
}
# the CPU time (user + system, in ms) of the shell's children so far: the clients', and under
# cordon the sentry's with its gate (the upstream's is not counted); on a shared machine a
# steadier measure of what a mode costs than the wall clock
to_ms() { # 1m2.345s
        local m=${1%%m*} sec=${1#*m}
        sec=${sec%s}
        echo $((m * 60000 + 10#${sec%.*} * 1000 + 10#${sec#*.}))
}
children_cpu() { # sets CPU_MS: the children's user + system time so far
        local self u s
        times >"$DIR/times"
        { read -r self; read -r u s; } <"$DIR/times"
        CPU_MS=$(($(to_ms "$u") + $(to_ms "$s")))
}
TICK=$(getconf CLK_TCK)
upstream_cpu() { # sets UP_MS: the upstream's user + system time so far (all its threads)
        local f
        read -r -a f <"/proc/$UP/stat"
        UP_MS=$(((f[13] + f[14]) * 1000 / TICK))
}
: >"$DIR/raw"
for rep in $(seq "$REPS"); do
        for m in ${BENCH_MODES:-direct passthrough terminated}; do
                for phase in n h d u; do
                        children_cpu
                        upstream_cpu
                        c0=$CPU_MS u0=$UP_MS
                        run_mode $m $phase | sed "s/^/$m /" >>"$DIR/raw" || echo "$m $phase failed in repetition $rep" >&2
                        children_cpu
                        upstream_cpu
                        echo "$m cpu $phase $((CPU_MS - c0)) $((UP_MS - u0))" >>"$DIR/raw"
                done
        done
done
python3 - "$DIR/raw" "$MIB" <<'EOF'
import statistics, sys
rows, runs, base = {}, {}, {}
for line in open(sys.argv[1]):
    m, k, *v = line.split()
    if k == "h":
        rows.setdefault((m, k), []).append((float(v[1]) - float(v[0])) * 1e6)
        rows.setdefault((m, "c"), []).append((float(v[1]) - float(v[2])) * 1e6)
    elif k == "cpu":
        # per phase: the clients' (+ sentry's) ms and the upstream's; the
        # transfers' per GiB moved, and the whole run's (the three phases)
        ph, cli, up = v[0], float(v[1]), float(v[2])
        gib = int(sys.argv[2]) / 1024
        if ph == "n":
            base[m] = cli
        elif ph in ("d", "u"):
            rows.setdefault((m, "c" + ph), []).append((cli - base.get(m, 0)) / gib)
            rows.setdefault((m, "s" + ph), []).append(up / gib)
        if ph != "n":
            runs.setdefault(m, []).append(cli)
        if ph == "u":
            rows.setdefault((m, "cpu"), []).append(sum(runs.pop(m)))
    elif k == "p":
        rows.setdefault((m, "pc"), []).append(float(v[0]))
        rows.setdefault((m, "ph"), []).append(float(v[1]))
        rows.setdefault((m, "pr"), []).append(float(v[2]))
    else:
        rows.setdefault((m, k), []).append(float(v[0]) / 1e6)
def med(m, k):
    x = rows.get((m, k))
    return statistics.median(x) if x else float("nan")
print("| HTTPS via curl (%s MiB) | direct | passthrough | terminated |" % sys.argv[2])
print("|---|---|---|---|")
for k, label, unit in (("h", "curl: TLS handshake (appconnect - connect)", "us"),
                       ("c", "curl: connect + handshake (appconnect - namelookup)", "us"),
                       ("pc", "python: connect", "us"), ("ph", "python: connect + handshake", "us"),
                       ("pr", "python: connect + handshake + first response byte", "us"), ("d", "download", "MB/s"),
                       ("u", "upload", "MB/s"),
                       ("cd", "download: CPU per GiB, client (+ sentry and gate; a run's own cost taken off)", "ms"),
                       ("sd", "download: CPU per GiB, upstream", "ms"),
                       ("cu", "upload: CPU per GiB, client (+ sentry and gate; a run's own cost taken off)", "ms"),
                       ("su", "upload: CPU per GiB, upstream", "ms"),
                       ("cpu", "CPU of a run: clients (+ sentry and gate), upstream not counted", "ms")):
    d = med("direct", k)
    cells = ["%.0f %s" % (d, unit)]
    for m in ("passthrough", "terminated"):
        v = med(m, k)
        extra = " (+%.0f us)" % (v - d) if unit == "us" else " (+%.0f ms)" % (v - d) if unit == "ms" else " (x%.2f)" % (v / d if d else 0)
        cells.append("%.0f %s%s" % (v, unit, extra))
    print("| %s | %s |" % (label, " | ".join(cells)))
EOF
