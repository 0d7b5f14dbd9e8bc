#!/bin/bash
# cordon integration tests for the egress gate (net/): real clients inside the sandbox reach a
# listed name through the sentry's DNS stub and gate, and everything else is refused and audited.
# Run like run.sh:
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/egress.sh [REGEX...]
#
# Fixture (set up once, before the tests; all removed on exit): a network namespace
# cordon-eg-PID joined to the host by a veth pair, host side 10.213.N.1/30 and 10.213.N.5/30,
# namespace side 10.213.N.2/30 and 10.213.N.6/30 (N in 1..125, from the PID and free on the host;
# tests/escape/run.sh takes 126..250). In the namespace an HTTPS
# server for upstream.cordon.test (certificate from a test CA made here) on port 443 of both
# addresses, serving a random token, and recorders on TCP port 80 and UDP port 53. The policies
# allow upstream.cordon.test:443 and name 10.213.N.0/30 in testing.allowPrivateNetworks, with a
# testing.hostsFile that maps the name: 10.213.N.2 is the allowed upstream; 10.213.N.6 is the
# same server behind a private address the policy does not allow (a gate that wrongly connected
# to it would be seen getting through). The host routes 10.213.N.8/30 into the namespace, which
# drops it (no forwarding there): a destination where a connect stays in progress. No traffic
# leaves for anywhere but the host's loopback and that namespace: every name the gate resolves
# is in the hosts file, and no test makes the gate connect to a synthetic address it did not
# hand out on the rule's port (see pool_address_beyond_rules).
#
# Needs root (network namespaces), ip(8), python3 and openssl on the host; skips otherwise.
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

UPSTREAM=upstream.cordon.test

host_python() {
        if [ -x /usr/bin/python3 ]; then
                echo /usr/bin/python3
        else
                command -v python3
        fi
}

# =============================================================================================
# the fixture (in the runner process; the tests see it through EG_* variables)

EG_PIDS=()
EG_NS=
EG_VETH=

eg_cleanup() {
        local p
        for p in "${EG_PIDS[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${EG_PIDS[@]}"; do
                wait "$p" 2>/dev/null
        done
        EG_PIDS=()
        [ -n "$EG_VETH" ] && ip link del "${EG_VETH}h" >/dev/null 2>&1
        [ -n "$EG_NS" ] && ip netns del "$EG_NS" >/dev/null 2>&1
        [ -n "${EG_DIR:-}" ] && [ -d "$EG_DIR" ] && rm -rf -- "$EG_DIR"
        EG_NS=""
        EG_VETH=""
}

# the upstream, run inside the namespace: HTTPS on :443 (every accepted connection logged with
# its peer), a TCP recorder on :80 and a UDP recorder on :53
write_upstream_py() {
        cat >"$1" <<'EOF'
import hashlib, http.server, os, socket, ssl, subprocess, sys, threading
root, cert, key, logdir = sys.argv[1:5]

def log(name, line):
    with open(os.path.join(logdir, name), "a") as f:
        f.write(line + "\n")

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)

class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def log_message(self, *a):
        pass
    def body(self):
        # the request's body: Content-Length bytes, or chunked framing decoded
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            data = b""
            while True:
                k = int(self.rfile.readline().split(b";")[0], 16)
                if k == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(k)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""
    def echo(self):
        # what arrived: the request line, the headers, and the body's length and bytes
        data = self.body()
        log("echo.log", "%s %s auth=%s body=%d sha=%s" % (self.command, self.path, self.headers.get("Authorization"),
                                                          len(data), hashlib.sha256(data).hexdigest()))
        body = ("%s %s\n%s\nbody %d %s\n" % (self.command, self.path, str(self.headers).strip(), len(data),
                                               data.decode("latin-1"))).encode("latin-1")
        if self.headers.get("X-Keep-Alive"):
            # asked for (broker.sh): the connection stays open for the client's next request
            self.protocol_version = "HTTP/1.1"
            self.close_connection = False
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def git(self):
        # git's smart HTTP through git http-backend (CGI), repositories under <root>/../git; each
        # request logged with the Authorization it carried
        path, _, query = self.path[4:].partition("?")
        n = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(n) if n else b""
        log("echo.log", "%s /git%s auth=%s body=%d" % (self.command, path, self.headers.get("Authorization"),
                                                      len(data)))
        env = dict(os.environ, GIT_PROJECT_ROOT=os.path.join(root, "..", "git"), GIT_HTTP_EXPORT_ALL="1",
                   REMOTE_USER="tester", REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                   CONTENT_TYPE=self.headers.get("Content-Type") or "", CONTENT_LENGTH=str(len(data)),
                   HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding") or "",
                   GIT_PROTOCOL=self.headers.get("Git-Protocol") or "")
        out = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True).stdout
        head, _, body = out.partition(b"\r\n\r\n")
        status = 200
        hdrs = []
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                hdrs.append((k, v.strip()))
        self.send_response(status)
        for k, v in hdrs:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        if self.path.startswith("/git/"):
            self.git()
            return
        self.echo()
    def do_PUT(self):
        self.echo()
    def do_DELETE(self):
        self.echo()
    def chunked(self):
        # /chunked/NAME?cut=K: the file NAME in HTTP/1.1 chunked framing, K bytes a chunk, each
        # chunk written on its own (a secret in it is split by the chunk lines)
        name, _, query = self.path[len("/chunked/"):].partition("?")
        cut = max(1, int(dict(kv.split("=", 1) for kv in query.split("&") if "=" in kv).get("cut", "7")))
        with open(os.path.join(root, os.path.basename(name)), "rb") as f:
            data = f.read()
        self.protocol_version = "HTTP/1.1"
        self.close_connection = True
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for i in range(0, len(data), cut):
            piece = data[i:i + cut]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
    def do_GET(self):
        if self.path.startswith("/git/"):
            self.git()
            return
        if self.path.startswith("/chunked/"):
            self.chunked()
            return
        if self.path.startswith("/echo"):
            self.echo()
            return
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "https://other.cordon.test/echo")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/peer":
            body = ("%s:%d" % self.client_address).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    def get_request(self):
        c, a = self.socket.accept()
        log("https.log", "%s:%d" % a[:2])
        c.settimeout(10)
        # the handshake happens in the handler's thread, so a client that never starts one
        # cannot hold the accept loop
        return ctx.wrap_socket(c, server_side=True, do_handshake_on_connect=False), a
    def handle_error(self, request, client_address):
        pass

def tcp80():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 80))
    s.listen(16)
    while True:
        c, a = s.accept()
        log("tcp80.log", "%s:%d" % a)
        c.close()

def udp53():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 53))
    while True:
        d, a = s.recvfrom(4096)
        log("udp53.log", "%s:%d %d" % (a[0], a[1], len(d)))

srv = Server(("0.0.0.0", 443), Handler)
threading.Thread(target=tcp80, daemon=True).start()
threading.Thread(target=udp53, daemon=True).start()
open(os.path.join(logdir, "ready"), "w").write("ok")
srv.serve_forever()
EOF
}

# the clients run inside the sandbox (bound at /eg); every mode prints "key value" lines
write_client_py() {
        cat >"$1" <<'EOF'
import errno, json, os, select, socket, ssl, struct, sys, time, urllib.request

NAME = "upstream.cordon.test"
CA = "/ca/ca.pem"

def err(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if isinstance(e, OSError) and e.errno else repr(e)

def ctx():
    return ssl.create_default_context(cafile=CA)

def get(url):
    with urllib.request.urlopen(url, context=ctx(), timeout=10) as r:
        return r.read().decode()

def addr4(name, port):
    return socket.getaddrinfo(name, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]

def try_connect(name, port, family=socket.AF_INET, blocking=False):
    """connect to the first address of name; returns 'connected PEER' or the errno name
    (Python's timeout makes the socket non-blocking underneath: blocking=True for a plain one)"""
    a = socket.getaddrinfo(name, port, family, socket.SOCK_STREAM)[0][4]
    s = socket.socket(family, socket.SOCK_STREAM)
    if not blocking:
        s.settimeout(10)
    try:
        s.connect(a)
        return "connected %s:%d" % s.getpeername()[:2]
    except OSError as e:
        return err(e)
    finally:
        s.close()

def connect_addr(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect((host, port))
        return "connected %s:%d" % s.getpeername()[:2]
    except OSError as e:
        return err(e)
    finally:
        s.close()

def http_over(sock):
    """TLS and a GET /token over a connected socket; returns the body"""
    t = ctx().wrap_socket(sock, server_hostname=NAME)
    t.sendall(b"GET /token HTTP/1.0\r\nHost: " + NAME.encode() + b"\r\n\r\n")
    data = b""
    while True:
        d = t.recv(65536)
        if not d:
            break
        data += d
    t.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return body.decode()

def dns_query(name, qtype, tcp=False):
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", qtype, 1)
    if tcp:
        s = socket.create_connection(("127.0.0.53", 53), timeout=5)
        s.sendall(struct.pack(">H", len(q)) + q)
        buf = b""
        while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
            d = s.recv(4096)
            if not d:
                break
            buf += d
        s.close()
        r = buf[2:]
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(q, ("127.0.0.53", 53))
        r, _ = s.recvfrom(4096)
        s.close()
    rid, flags, qd, an = struct.unpack(">HHHH", r[:8])
    rcode = flags & 15
    addrs = []
    # skip the question
    i = 12
    while r[i] != 0:
        i += 1 + r[i]
    i += 5
    for _ in range(an):
        if r[i] & 0xC0 == 0xC0:
            i += 2
        else:
            while r[i] != 0:
                i += 1 + r[i]
            i += 1
        t, c, ttl, rdlen = struct.unpack(">HHIH", r[i:i + 10])
        i += 10
        rd = r[i:i + rdlen]
        i += rdlen
        if t == 1:
            addrs.append(socket.inet_ntop(socket.AF_INET, rd))
        elif t == 28:
            addrs.append(socket.inet_ntop(socket.AF_INET6, rd))
    return "id=%d rcode=%d answers=%s" % (rid, rcode, ",".join(addrs) or "-")

mode = sys.argv[1]
args = sys.argv[2:]

if mode == "get":
    try:
        print("body", get(args[0]))
    except Exception as e:
        print("error", err(getattr(e, "reason", e)))

elif mode == "resolve":
    try:
        res = socket.getaddrinfo(args[0], 443, 0, socket.SOCK_STREAM)
        print("addrs", " ".join(sorted(set(a[4][0] for a in res))))
    except socket.gaierror as e:
        print("gaierror", e.errno, {socket.EAI_NONAME: "EAI_NONAME", socket.EAI_AGAIN: "EAI_AGAIN"}.get(e.errno, "?"))

elif mode == "connect":
    fam = socket.AF_INET6 if len(args) > 2 and args[2] == "6" else socket.AF_INET
    print("connect", try_connect(args[0], int(args[1]), fam))

elif mode == "connect-blocking":
    print("connect", try_connect(args[0], int(args[1]), blocking=True))

elif mode == "connect-addr":
    print("connect", connect_addr(args[0], int(args[1])))

elif mode == "rebind":
    s = socket.socket()
    s.settimeout(10)
    s.connect(addr4(NAME, 443))
    print("first", http_over(s))
    with open("/sync/state", "w") as f:
        f.write("first-done")
    deadline = time.time() + 20
    while not os.path.exists("/sync/go") and time.time() < deadline:
        time.sleep(0.05)
    print("go", os.path.exists("/sync/go"))
    print("second", try_connect(NAME, 443))

elif mode == "nonblocking":
    a = addr4(NAME, 443)
    s = socket.socket()
    s.setblocking(False)
    r = s.connect_ex(a)
    print("connect_ex", errno.errorcode.get(r, r))
    _, w, _ = select.select([], [s], [], 10)
    print("writable", bool(w))
    print("so_error", s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
    print("peer %s:%d" % s.getpeername())
    r = s.connect_ex(a)
    print("connect_again", errno.errorcode.get(r, r))
    s.setblocking(True)
    s.settimeout(10)
    print("body", http_over(s))

elif mode == "fdnum":
    def fds():
        return sorted(int(x) for x in os.listdir("/proc/self/fd"))
    a = addr4(NAME, 443)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s2 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s2.set_inheritable(True)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # options the gate carries over to the socket it connects: set ones, and
    # one set and then put back to its default (the gate copies only what a
    # fresh socket of its own would not have anyway)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 77)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 3))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, 4321)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, 0)
    fd = s.fileno()
    before_fds, before_ino = fds(), os.fstat(fd).st_ino
    s.settimeout(10)
    s.connect(a)
    after_fds, after_ino = fds(), os.fstat(fd).st_ino
    print("fd_same_set", before_fds == after_fds)
    print("replaced", before_ino != after_ino)
    print("peer %s:%d" % s.getpeername())
    # the fd itself (not Python's idea of it): getpeername on a fresh object for the number
    raw = socket.socket(fileno=os.dup(fd))
    print("raw_peer %s:%d" % raw.getpeername())
    raw.close()
    print("nodelay", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    print("keepalive", s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE))
    print("keepidle", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE))
    print("linger %d,%d" % struct.unpack("ii", s.getsockopt(socket.SOL_SOCKET, socket.SO_LINGER, 8)))
    print("user_timeout", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT))
    print("cloexec", not os.get_inheritable(fd))
    s2.settimeout(10)
    s2.connect(a)
    print("inheritable_kept", os.get_inheritable(s2.fileno()))
    print("body", http_over(s))
    s2.close()

elif mode == "ipv6":
    res = socket.getaddrinfo(NAME, 443, socket.AF_INET6, socket.SOCK_STREAM)
    a = res[0][4]
    print("aaaa", a[0])
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(a)
        print("peer %s:%d" % s.getpeername()[:2])
        print("body", http_over(s))
    except OSError as e:
        print("error", err(e))

elif mode == "udp":
    synth = addr4(NAME, 443)[0]
    for label, dest in (("literal", (args[0], 53)), ("synthetic", (synth, 443)), ("synthetic53", (synth, 53))):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(b"cordon-udp", dest)
            print("sendto_%s sent" % label)
        except OSError as e:
            print("sendto_%s %s" % (label, err(e)))
        try:
            s.sendmsg([b"cordon-udp"], [], 0, dest)
            print("sendmsg_%s sent" % label)
        except OSError as e:
            print("sendmsg_%s %s" % (label, err(e)))
        s.close()
    # a connected datagram socket: connect() goes nowhere, and neither does send()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((synth, 443))
        s.send(b"cordon-udp")
        print("connected_send sent")
    except OSError as e:
        print("connected_send %s" % err(e))
    s.close()
    for proto in ("udp", "tcp"):
        for name, qt in ((NAME, 1), (NAME, 28), ("other.cordon.test", 1)):
            try:
                print("dns_%s_%s_%d %s" % (proto, name.split(".")[0], qt, dns_query(name, qt, proto == "tcp")))
            except Exception as e:
                print("dns_%s_%s_%d error %r" % (proto, name.split(".")[0], qt, e))

elif mode == "slow":
    a = addr4(NAME, 443)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 1, 0))
    t = time.time()
    try:
        s.connect(a)
        print("sndtimeo connected")
    except OSError as e:
        print("sndtimeo %s %.1f" % (err(e), time.time() - t))
    s.close()
    s = socket.socket()
    s.setblocking(False)
    for label in ("nb_first", "nb_again", "nb_third"):
        r = s.connect_ex(a)
        print(label, errno.errorcode.get(r, r))
    s.close()

elif mode == "loopback":
    import threading
    for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        srv = socket.socket(fam, socket.SOCK_STREAM)
        srv.bind((host, 0))
        srv.listen(1)
        port = srv.getsockname()[1]
        def serve():
            c, _ = srv.accept()
            c.sendall(b"pong:" + c.recv(64))
            c.close()
        t = threading.Thread(target=serve)
        t.start()
        c = socket.create_connection((host, port), timeout=5)
        c.sendall(b"ping")
        print("tcp_%s %s" % (host, c.recv(64).decode()))
        c.close()
        t.join()
        srv.close()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    v.sendto(b"dgram", u.getsockname())
    u.settimeout(5)
    print("udp_127.0.0.1", u.recvfrom(64)[0].decode())

elif mode == "pool":
    # synthetic addresses that stand for no rule (the policy lists one name, index 0):
    # datagrams first (the gate refuses them without connecting anywhere), then TCP
    # connects on a port no rule has
    for a in args:
        fam = socket.AF_INET6 if ":" in a else socket.AF_INET
        u = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            u.sendto(b"x", (a, 53))
            print("udp %s sent" % a, flush=True)
        except OSError as e:
            print("udp %s %s" % (a, err(e)), flush=True)
        u.close()
    for a in args:
        fam = socket.AF_INET6 if ":" in a else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        try:
            s.connect((a, 61703))
            print("tcp %s connected" % a, flush=True)
        except OSError as e:
            print("tcp %s %s" % (a, err(e)), flush=True)
        s.close()
    print("survived", flush=True)

elif mode == "many":
    # N connections at once, all open together before any sends: each must reach the upstream
    # as a connection of its own (its own relay and upstream socket), which /peer shows
    import threading
    n = int(args[0])
    ready = threading.Barrier(n)
    peers, errors = [], []
    def one():
        try:
            s = socket.create_connection((NAME, 443), timeout=20)
            ready.wait(20)
            t = ctx().wrap_socket(s, server_hostname=NAME)
            t.sendall(b"GET /peer HTTP/1.0\r\nHost: " + NAME.encode() + b"\r\n\r\n")
            data = b""
            while True:
                d = t.recv(65536)
                if not d:
                    break
                data += d
            t.close()
            peers.append(data.partition(b"\r\n\r\n")[2].decode())
        except Exception as e:
            errors.append(err(e))
    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("answered", len(peers))
    print("distinct", len(set(peers)))
    print("errors", ",".join(sorted(set(errors))) or "-")

elif mode == "stranger":
    # one connection (the gate's loopback listener exists from then on), then wait for the
    # host's test to connect to that listener itself, then another connection; and try the
    # listener's ports from in here
    box = args[0]
    print("first", get("https://%s/token" % NAME), flush=True)
    open(os.path.join(box, "ready"), "w").close()
    for _ in range(400):
        if os.path.exists(os.path.join(box, "go")):
            break
        time.sleep(0.05)
    print("second", get("https://%s/token" % NAME), flush=True)
    for port in open(os.path.join(box, "ports")).read().split():
        for host in ("127.0.0.1", "::1"):
            print("inside_%s_%s %s" % (host, port, connect_addr(host, int(port))), flush=True)

elif mode == "mix":
    # a bit of everything, for the audit log
    print("get", get("https://%s/token" % NAME))
    print("port80", try_connect(NAME, 80))
    print("literal", connect_addr(args[0], 443))
    try:
        socket.getaddrinfo("other.cordon.test", 443)
        print("other resolved")
    except socket.gaierror as e:
        print("other", e.errno)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", (addr4(NAME, 443)[0], 443))
    except OSError as e:
        print("udp", err(e))
    # names that need escaping in JSON, one as long as a name can be
    for odd in ('q"uote\\back.cordon.test', "{}[],:%s.cordon.test" % ("x" * 50),
                ".".join(["\\" * 31 + '"' * 32] * 3 + ["y" * 61])):
        try:
            print("odd", dns_query(odd, 1))
        except Exception as e:
            print("odd error", repr(e))

else:
    print("unknown mode", mode)
    sys.exit(2)
EOF
}

# pick N in 1..125 so that nothing on the host uses 10.213.N.*
eg_pick_subnet() {
        local n i used
        used=$( (ip -o addr show; ip route show table all) 2>/dev/null)
        n=$(($$ % 125 + 1))
        for ((i = 0; i < 125; i++)); do
                if ! grep -qE "10\.213\.$n\.[0-9]" <<<"$used"; then
                        echo "$n"
                        return 0
                fi
                n=$((n % 125 + 1))
        done
        return 1
}

eg_setup() {
        local py ns dir n i
        [ "$(id -u)" = 0 ] || {
                EG_SKIP="network namespaces for the upstream need root"
                return
        }
        command -v ip >/dev/null 2>&1 || {
                EG_SKIP="ip(8) is not installed"
                return
        }
        command -v openssl >/dev/null 2>&1 || {
                EG_SKIP="openssl is not installed (the test CA)"
                return
        }
        py=$(host_python)
        [ -n "$py" ] || {
                EG_SKIP="python3 is not installed"
                return
        }
        # the sandbox's python (the host's system one, seen through the view)
        [ -x /usr/bin/python3 ] || {
                EG_SKIP="no /usr/bin/python3 for the clients inside the sandbox"
                return
        }
        n=$(eg_pick_subnet) || {
                EG_SKIP="no free 10.213.N.0/24 for the fixture"
                return
        }
        dir=$(mktemp -d "${IT_SCRATCH_BASE:-/var/tmp}/cordon-eg.XXXXXX") || {
                EG_FIXTURE_ERROR="cannot create the fixture directory"
                return
        }
        EG_DIR=$dir
        chmod 0755 "$dir"
        mkdir -p "$dir/ca" "$dir/bin" "$dir/www" "$dir/pki" "$dir/log"
        chmod 0755 "$dir/ca" "$dir/bin" "$dir/www"
        chmod 0700 "$dir/pki"

        # the test CA and the server's certificate
        if ! (
                cd "$dir/pki" &&
                        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                                -keyout ca.key -out ca.pem -days 2 -subj "/CN=cordon egress test CA" \
                                -addext basicConstraints=critical,CA:TRUE \
                                -addext keyUsage=critical,keyCertSign,cRLSign &&
                        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                                -keyout server.key -out server.csr -subj "/CN=$UPSTREAM" &&
                        printf '%s\n' "subjectAltName=DNS:$UPSTREAM" "basicConstraints=CA:FALSE" \
                                "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
                                "authorityKeyIdentifier=keyid" >ext.cnf &&
                        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
                                -out server.pem -days 2 -extfile ext.cnf
        ) >"$dir/openssl.log" 2>&1; then
                EG_FIXTURE_ERROR="openssl could not make the test certificates: $(tail -n 3 "$dir/openssl.log" | tr '\n' ' ')"
                return
        fi
        cp "$dir/pki/ca.pem" "$dir/ca/ca.pem" && chmod 0644 "$dir/ca/ca.pem"
        EG_TOKEN="cordon-egress-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
        printf '%s' "$EG_TOKEN" >"$dir/www/token"
        chmod 0644 "$dir/www/token"
        write_upstream_py "$dir/upstream.py"
        write_client_py "$dir/bin/client.py"
        chmod 0644 "$dir/bin/client.py"

        # the namespace and the veth pair
        ns="cordon-eg-$$"
        if ! ip netns add "$ns" 2>"$dir/ip.log"; then
                EG_SKIP="cannot create a network namespace: $(head -n 1 "$dir/ip.log")"
                return
        fi
        EG_NS=$ns
        EG_VETH="ceg$$"
        if ! {
                ip link add "${EG_VETH}h" type veth peer name "${EG_VETH}n" &&
                        ip link set "${EG_VETH}n" netns "$ns" &&
                        ip addr add "10.213.$n.1/30" dev "${EG_VETH}h" &&
                        ip addr add "10.213.$n.5/30" dev "${EG_VETH}h" &&
                        ip link set "${EG_VETH}h" up &&
                        ip -n "$ns" addr add "10.213.$n.2/30" dev "${EG_VETH}n" &&
                        ip -n "$ns" addr add "10.213.$n.6/30" dev "${EG_VETH}n" &&
                        ip -n "$ns" link set "${EG_VETH}n" up &&
                        ip -n "$ns" link set lo up &&
                        # the blackhole (.9) is routed into the namespace, which must drop it
                        # silently: a namespace that forwards (ip_forward=1 is inherited where the
                        # host forwards, e.g. once podman ran) answers "network unreachable" at once
                        ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=0 &&
                        ip route add "10.213.$n.8/30" via "10.213.$n.2" dev "${EG_VETH}h"
        } 2>>"$dir/ip.log"; then
                EG_FIXTURE_ERROR="cannot set up the veth pair: $(tail -n 1 "$dir/ip.log")"
                return
        fi
        # the upstream (timeout: a safety net should the cleanup never run)
        timeout 600 ip netns exec "$ns" "$py" "$dir/upstream.py" "$dir/www" "$dir/pki/server.pem" \
                "$dir/pki/server.key" "$dir/log" </dev/null >"$dir/upstream.out" 2>&1 &
        EG_PIDS+=($!)
        for ((i = 0; i < 100; i++)); do
                [ -e "$dir/log/ready" ] && break
                sleep 0.05
        done
        if [ ! -e "$dir/log/ready" ]; then
                EG_FIXTURE_ERROR="the upstream did not start: $(tail -n 3 "$dir/upstream.out" | tr '\n' ' ')"
                return
        fi
        # the upstream answers from the host, on both of its addresses
        local got
        for a in "10.213.$n.2" "10.213.$n.6"; do
                got=$("$py" - "$a" "$dir/ca/ca.pem" "$UPSTREAM" <<'EOF' 2>&1
import socket, ssl, sys
addr, ca, name = sys.argv[1:4]
s = socket.create_connection((addr, 443), timeout=5)
t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname=name)
t.sendall(b"GET /token HTTP/1.0\r\nHost: " + name.encode() + b"\r\n\r\n")
d = b""
while True:
    x = t.recv(4096)
    if not x:
        break
    d += x
print(d.partition(b"\r\n\r\n")[2].decode())
EOF
                )
                if [ "$got" != "$EG_TOKEN" ]; then
                        EG_FIXTURE_ERROR="the upstream does not answer from the host at $a:443: $(_it_short "$got")"
                        return
                fi
        done
        EG_NET=$n
        EG_UP="10.213.$n.2"
        EG_UP_DENIED="10.213.$n.6"
        EG_HOST_SIDE="10.213.$n.1"
        EG_BLACKHOLE="10.213.$n.9"
}

# =============================================================================================
# helpers for the tests

need_fixture() {
        [ -z "${EG_SKIP:-}" ] || skip "$EG_SKIP"
        [ -z "${EG_FIXTURE_ERROR:-}" ] || fail "fixture: $EG_FIXTURE_ERROR"
        [ -n "${EG_UP:-}" ] || fail "fixture: not set up"
}

# write_hosts FILE LINE...: replace a hosts file atomically (the gate reads it at every connect;
# it must never see it missing or half written, or it would ask the host's resolver)
write_hosts() {
        local f=$1
        shift
        printf '%s\n' "$@" >"$f.tmp" && mv -f "$f.tmp" "$f"
}

# policy FILE HOSTS_FILE [CIDR...]: the upstream allowed on 443, the fixture's first /30 (and the
# CIDRs given) allowed as private
policy() {
        local f=$1 h=$2 nets="\"10.213.$EG_NET.0/30\"" c
        shift 2
        for c in "$@"; do
                nets="$nets, \"$c\""
        done
        cat >"$f" <<EOF
{"networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "egress tests"}],
                   "testing": {"hostsFile": "$h", "allowPrivateNetworks": [$nets]}}}
EOF
}

# egress_setup: a policy and hosts file of the test's own (the name -> the allowed upstream);
# sets POLICY, HOSTS, AUDIT and RUNARGS for crun
egress_setup() {
        need_fixture
        HOSTS="$IT_TMP/hosts"
        POLICY="$IT_TMP/policy.json"
        AUDIT="$IT_TMP/audit.jsonl"
        write_hosts "$HOSTS" "$UPSTREAM $EG_UP"
        policy "$POLICY" "$HOSTS"
        RUNARGS=(--policy "$POLICY" --audit "$AUDIT" --bind "$EG_DIR/ca:/ca:ro" --bind "$EG_DIR/bin:/eg:ro")
}

# audit_count FILE KEY=VALUE...: how many records have all these values
audit_count() {
        local f=$1
        shift
        [ -e "$f" ] || {
                echo 0
                return
        }
        "$(host_python)" - "$f" "$@" <<'EOF'
import json, sys
f, conds = sys.argv[1], [c.split("=", 1) for c in sys.argv[2:]]
n = 0
for line in open(f):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if all(str(r.get(k)) == v for k, v in conds):
        n += 1
print(n)
EOF
}

# expect_audit FILE WHAT KEY=VALUE...: at least one such record
expect_audit() {
        local f=$1 what=$2 n
        shift 2
        n=$(audit_count "$f" "$@")
        if [ "${n:-0}" -lt 1 ]; then
                _it_soft_fail "audit: no record with $* ($what); the log: $(_it_short "$(cat "$f" 2>/dev/null)")"
                return 1
        fi
}

# lines in an upstream log (https.log, tcp80.log, udp53.log)
upstream_seen() {
        if [ -e "$EG_DIR/log/$1" ]; then
                wc -l <"$EG_DIR/log/$1"
        else
                echo 0
        fi
}

field() { # KEY: the value of "KEY value" in $OUT
        printf '%s\n' "$OUT" | sed -n "s/^$1 //p" | head -n 1
}

# =============================================================================================
# the tests

it_test tls_request_allowed
tls_request_allowed() {
        egress_setup
        local before
        before=$(upstream_seen https.log)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py get "https://$UPSTREAM/token"
        expect_rc 0 "python3 urllib GET"
        expect_eq "$EG_TOKEN" "$(field body)" "the body fetched through the gate"
        expect_contains "$ERR" "test use only" "cordon says the testing section is on"
        expect_audit "$AUDIT" "the connect" reason=egress_allowed decision=allow syscall=connect \
                host=$UPSTREAM "resolved=$EG_UP:443"
        expect_audit "$AUDIT" "the hosts file and the private range were used" reason=test_override \
                decision=allow host=$UPSTREAM "resolved=$EG_UP:443"
        expect_audit "$AUDIT" "the stub answered the name" reason=dns_answered host=$UPSTREAM
        expect_eq $((before + 1)) "$(upstream_seen https.log)" "connections the upstream saw"
        # the connection is the sentry's, made from the host's namespace
        crun "${RUNARGS[@]}" -- python3 /eg/client.py get "https://$UPSTREAM/peer"
        expect_match "$(field body)" "^$EG_HOST_SIDE:[0-9]+$" "the upstream sees the host side of the veth"
}

# the kernel egress floor (BPF on the sandbox's cgroup) refuses every non-loopback destination of
# the sandbox's own sockets; the gate's connection is the sentry's socket and is unaffected
it_test gate_works_with_floor
gate_works_with_floor() {
        egress_setup
        crun -v "${RUNARGS[@]}" -- python3 /eg/client.py get "https://$UPSTREAM/token"
        expect_rc 0 "python3 urllib GET with -v"
        expect_contains "$ERR" "egress floor: BPF cgroup" "the floor is attached"
        expect_eq "$EG_TOKEN" "$(field body)" "the body fetched through the gate with the floor on"
        # and the floor holds under it: a raw address, with the seccomp network rows off, is refused
        # by the kernel (EPERM) rather than by the gate (EACCES, audited)
        CORDON_DEBUG_DISABLE=net-emulation crun --debug-unsafe "${RUNARGS[@]}" -- python3 -c '
import socket, sys
s = socket.socket()
try:
    s.connect((sys.argv[1], 443))
    print("connected")
except OSError as e:
    print("errno", e.errno)
' "$EG_UP"
        expect_eq "errno 1" "$OUT" "a direct connect to the upstream's address with emulation off"
}

it_test tls_openssl_s_client
tls_openssl_s_client() {
        egress_setup
        need_in_sandbox openssl
        # the handshake alone (stdin at end of file: s_client closes cleanly)
        crun "${RUNARGS[@]}" -- sh -c "openssl s_client -connect $UPSTREAM:443 -servername $UPSTREAM \
                -CAfile /ca/ca.pem -verify_return_error </dev/null 2>&1"
        expect_rc 0 "openssl s_client"
        expect_contains "$OUT" "Verify return code: 0 (ok)" "the certificate verifies"
        # and a request (the server closes without close_notify, which s_client reports as an
        # error: its exit status says nothing here)
        crun "${RUNARGS[@]}" -- sh -c "printf 'GET /token HTTP/1.0\r\nHost: $UPSTREAM\r\n\r\n' |
                openssl s_client -quiet -connect $UPSTREAM:443 -servername $UPSTREAM -CAfile /ca/ca.pem \
                        -verify_return_error -ign_eof 2>&1"
        expect_contains "$OUT" "$EG_TOKEN" "the token through s_client"
        expect_audit "$AUDIT" "the connect" reason=egress_allowed "resolved=$EG_UP:443"
}

it_test tls_curl
tls_curl() {
        egress_setup
        need_in_sandbox curl
        crun "${RUNARGS[@]}" -- curl -sS --max-time 10 --cacert /ca/ca.pem "https://$UPSTREAM/token"
        expect_rc 0 "curl"
        expect_eq "$EG_TOKEN" "$OUT" "the body curl fetched"
        expect_audit "$AUDIT" "the connect" reason=egress_allowed "resolved=$EG_UP:443"
        # curl's own refusals
        crun "${RUNARGS[@]}" -- curl -sS --max-time 5 "http://$UPSTREAM/"
        expect_true "curl to port 80 must fail (exit $RC)" test "$RC" != 0
        crun "${RUNARGS[@]}" -- curl -sS --max-time 5 --cacert /ca/ca.pem "https://other.cordon.test/"
        expect_eq 6 "$RC" "curl: could not resolve an unlisted name"
}

it_test port_80_refused
port_80_refused() {
        egress_setup
        local before
        before=$(upstream_seen tcp80.log)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 80
        expect_rc 0 "the client"
        expect_eq EACCES "$(field connect)" "connect to $UPSTREAM:80"
        expect_audit "$AUDIT" "port 80" reason=port_blocked decision=deny host=$UPSTREAM
        expect_eq 0 "$(audit_count "$AUDIT" reason=egress_allowed)" "no egress_allowed record"
        expect_eq "$before" "$(upstream_seen tcp80.log)" "connections the port-80 listener saw"
        # other ports too, and the right port on IPv6
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 22
        expect_eq EACCES "$(field connect)" "connect to $UPSTREAM:22"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 80 6
        expect_eq EACCES "$(field connect)" "connect to $UPSTREAM:80 over IPv6"
}

it_test unlisted_name_nxdomain
unlisted_name_nxdomain() {
        egress_setup
        crun "${RUNARGS[@]}" -- python3 /eg/client.py resolve other.cordon.test
        expect_rc 0 "the client"
        expect_eq "$(printf '%s' "-2 EAI_NONAME")" "$(field gaierror)" "getaddrinfo(other.cordon.test)"
        expect_audit "$AUDIT" "the query" reason=dns_blocked decision=deny host=other.cordon.test
        crun "${RUNARGS[@]}" -- getent hosts other.cordon.test
        expect_true "getent hosts other.cordon.test must fail (exit $RC, output '$OUT')" test "$RC" != 0 -a -z "$OUT"
        # a name that differs from the listed one only by a suffix, a prefix or a trailing label
        local n
        for n in "www.$UPSTREAM" "$UPSTREAM.evil.test" "upstream.cordon"; do
                crun "${RUNARGS[@]}" -- python3 /eg/client.py resolve "$n"
                expect_eq "$(printf '%s' "-2 EAI_NONAME")" "$(field gaierror)" "getaddrinfo($n)"
        done
        # and the listed name resolves, case-insensitively, only to the synthetic pool
        crun "${RUNARGS[@]}" -- python3 /eg/client.py resolve UPSTREAM.Cordon.TEST
        expect_match "$(field addrs)" '^198\.18\.[0-9]+\.[0-9]+ fdc0:d0::[0-9a-f:]+$' "the listed name's addresses"
        crun "${RUNARGS[@]}" -- getent hosts "$UPSTREAM"
        expect_rc 0 "getent hosts $UPSTREAM"
        expect_match "$OUT" "^(198\.18\.|fdc0:d0::)" "getent answer from the pool"
}

it_test raw_address_refused
raw_address_refused() {
        egress_setup
        local before
        before=$(upstream_seen https.log)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect-addr "$EG_UP" 443
        expect_rc 0 "the client"
        expect_eq EACCES "$(field connect)" "connect to $EG_UP:443"
        expect_audit "$AUDIT" "the literal" reason=ip_literal_blocked decision=deny "destination=$EG_UP:443"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect-addr "::ffff:$EG_UP" 443
        expect_eq EACCES "$(field connect)" "connect to [::ffff:$EG_UP]:443"
        expect_eq "$before" "$(upstream_seen https.log)" "connections the upstream saw"
}

it_test rebinding_refused
rebinding_refused() {
        egress_setup
        local sync out
        sync=$(scratch_dir sync)
        out="$IT_TMP/rebind.out"
        bg_cordon "$out" "${RUNARGS[@]}" --bind "$sync:/sync" -- python3 /eg/client.py rebind
        wait_until 20 grep -qs first-done "$sync/state" || {
                cat "$out" >&2
                fail "the first connect did not finish"
        }
        # rebind: the same name now answers the host's loopback
        write_hosts "$HOSTS" "$UPSTREAM 127.0.0.1"
        echo go >"$sync/go"
        wait "$BG_PID"
        RC=$?
        OUT=$(cat "$out")
        sed 's/^/  out| /' "$out" >&2
        expect_rc 0 "the client"
        expect_eq "$EG_TOKEN" "$(field first)" "the first connect, before rebinding"
        expect_eq EACCES "$(field second)" "the second connect, after rebinding to 127.0.0.1"
        expect_audit "$AUDIT" "the rebinding" reason=ssrf_blocked decision=deny host=$UPSTREAM \
                "resolved=127.0.0.1:443"
        expect_eq 1 "$(audit_count "$AUDIT" reason=egress_allowed)" "egress_allowed records"
}

it_test name_also_private_refused
name_also_private_refused() {
        egress_setup
        local before
        before=$(upstream_seen https.log)
        # the allowed address first, then one that is private and not allowed
        write_hosts "$HOSTS" "$UPSTREAM $EG_UP" "$UPSTREAM 192.168.1.1"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 443
        expect_rc 0 "the client"
        expect_eq EACCES "$(field connect)" "connect when the name also resolves to 192.168.1.1"
        expect_audit "$AUDIT" "192.168.1.1" reason=ssrf_blocked decision=deny "resolved=192.168.1.1:443"
        # the same server behind a private address the policy does not allow, first or alone
        write_hosts "$HOSTS" "$UPSTREAM $EG_UP_DENIED" "$UPSTREAM $EG_UP"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 443
        expect_eq EACCES "$(field connect)" "connect when the name resolves to $EG_UP_DENIED first"
        write_hosts "$HOSTS" "$UPSTREAM $EG_UP_DENIED"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 443
        expect_eq EACCES "$(field connect)" "connect when the name resolves to $EG_UP_DENIED only"
        expect_audit "$AUDIT" "$EG_UP_DENIED" reason=ssrf_blocked "resolved=$EG_UP_DENIED:443"
        # loopback, link-local, metadata and mapped forms: refused before any packet
        local a
        for a in 127.0.0.1 ::1 169.254.169.254 ::ffff:127.0.0.1 "::ffff:$EG_UP_DENIED" 0.0.0.0 \
                fe80::1 fd00::1 100.64.0.1 64:ff9b::7f00:1 2002:7f00:1:: 224.0.0.1; do
                write_hosts "$HOSTS" "$UPSTREAM $a"
                crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 443
                expect_eq EACCES "$(field connect)" "connect when the name resolves to $a"
        done
        expect_eq 0 "$(audit_count "$AUDIT" reason=egress_allowed)" "egress_allowed records"
        expect_eq "$before" "$(upstream_seen https.log)" "connections the upstream saw"
}

it_test deny_mode_default
deny_mode_default() {
        need_fixture
        local before audit="$IT_TMP/audit.jsonl"
        before=$(upstream_seen https.log)
        crun --audit "$audit" --bind "$EG_DIR/bin:/eg:ro" -- python3 /eg/client.py resolve "$UPSTREAM"
        expect_rc 0 "the client"
        expect_match "$(field gaierror)" "EAI_NONAME|EAI_AGAIN" "getaddrinfo($UPSTREAM) without a policy"
        crun --audit "$audit" --bind "$EG_DIR/bin:/eg:ro" -- python3 /eg/client.py connect-addr "$EG_UP" 443
        expect_match "$(field connect)" "^(EACCES|ENETUNREACH)$" "connect to $EG_UP:443 without a policy"
        expect_eq 0 "$(audit_count "$audit" decision=allow)" "allow records"
        expect_eq "$before" "$(upstream_seen https.log)" "connections the upstream saw"
        # an explicit deny policy is the same
        printf '{"networkPolicy": {"mode": "deny"}}\n' >"$IT_TMP/deny.json"
        crun --policy "$IT_TMP/deny.json" --bind "$EG_DIR/bin:/eg:ro" -- python3 /eg/client.py resolve "$UPSTREAM"
        expect_match "$(field gaierror)" "EAI_NONAME|EAI_AGAIN" "getaddrinfo($UPSTREAM) under mode deny"
}

it_test pool_address_beyond_rules
pool_address_beyond_rules() {
        egress_setup
        # The pool has room for NET_POOL_MAX names; the policy lists one. A synthetic address of
        # no rule must be refused like any other unlisted destination (and the sentry must not
        # look past the end of its rule table for it). UDP first: a refused datagram never
        # leads the gate to resolve or connect; TCP on a port no rule names.
        # A crashed sentry leaves its state for gc.
        at_exit '"$CORDON" gc'
        local addrs=(198.18.0.3 198.18.0.200 198.18.200.0 198.18.252.255 fdc0:d0::3 fdc0:d0::fd00)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py pool "${addrs[@]}"
        expect_rc 0 "the client (139: the sentry crashed; last line: $(printf '%s\n' "$OUT" | tail -n 1))"
        local a
        if expect_contains "$OUT" survived "the client ran to its end"; then
                for a in "${addrs[@]}"; do
                        expect_match "$OUT" "^udp $a (EACCES|ENETUNREACH)\$" "UDP to the unassigned synthetic address $a"
                        expect_match "$OUT" "^tcp $a (EACCES|ENETUNREACH)\$" "TCP to the unassigned synthetic address $a"
                done
        fi
        # without a policy no synthetic address stands for anything
        crun --bind "$EG_DIR/bin:/eg:ro" -- python3 /eg/client.py pool 198.18.0.2 198.18.200.0 fdc0:d0::2
        expect_rc 0 "the client without a policy (139: the sentry crashed; last line: $(printf '%s\n' "$OUT" | tail -n 1))"
        expect_contains "$OUT" survived "the client ran to its end without a policy"
}

it_test own_loopback_works
own_loopback_works() {
        egress_setup
        crun "${RUNARGS[@]}" -- python3 /eg/client.py loopback
        expect_rc 0 "the client"
        expect_eq pong:ping "$(field tcp_127.0.0.1)" "TCP over 127.0.0.1"
        expect_eq pong:ping "$(field tcp_::1)" "TCP over ::1"
        expect_eq dgram "$(field udp_127.0.0.1)" "UDP over 127.0.0.1"
        expect_eq 0 "$(audit_count "$AUDIT" decision=deny)" "deny records for the sandbox's own loopback"
}

it_test nonblocking_connect
nonblocking_connect() {
        egress_setup
        local before
        before=$(upstream_seen https.log)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py nonblocking
        expect_rc 0 "the client"
        expect_eq EINPROGRESS "$(field connect_ex)" "non-blocking connect"
        expect_eq True "$(field writable)" "select() says writable"
        expect_eq 0 "$(field so_error)" "SO_ERROR"
        expect_eq "$EG_UP:443" "$(field peer)" "getpeername"
        expect_eq EISCONN "$(field connect_again)" "connect() again once connected"
        expect_eq "$EG_TOKEN" "$(field body)" "TLS and HTTP over the socket"
        expect_eq $((before + 1)) "$(upstream_seen https.log)" "connections the upstream saw"
}

it_test fd_number_preserved
fd_number_preserved() {
        egress_setup
        crun "${RUNARGS[@]}" -- python3 /eg/client.py fdnum
        expect_rc 0 "the client"
        expect_eq True "$(field fd_same_set)" "the open fds are the same before and after connect"
        expect_eq "$EG_UP:443" "$(field peer)" "getpeername"
        expect_eq "$EG_UP:443" "$(field raw_peer)" "getpeername of a dup of the fd number"
        expect_eq 1 "$(field nodelay)" "TCP_NODELAY set before connect"
        expect_eq 1 "$(field keepalive)" "SO_KEEPALIVE set before connect"
        expect_eq 77 "$(field keepidle)" "TCP_KEEPIDLE set before connect"
        expect_eq 1,3 "$(field linger)" "SO_LINGER set before connect"
        expect_eq 0 "$(field user_timeout)" "TCP_USER_TIMEOUT set and put back to its default before connect"
        expect_eq True "$(field cloexec)" "FD_CLOEXEC kept"
        expect_eq True "$(field inheritable_kept)" "an inheritable socket stays inheritable"
        expect_eq "$EG_TOKEN" "$(field body)" "TLS and HTTP over the socket"
}

it_test ipv6_synthetic_address
ipv6_synthetic_address() {
        egress_setup
        crun "${RUNARGS[@]}" -- python3 /eg/client.py ipv6
        expect_rc 0 "the client"
        expect_match "$(field aaaa)" '^fdc0:d0::' "the AAAA answer"
        expect_eq "$EG_UP:443" "$(field peer)" "getpeername of the IPv6 socket"
        expect_eq "$EG_TOKEN" "$(field body)" "TLS and HTTP over the socket"
}

it_test udp_goes_nowhere
udp_goes_nowhere() {
        egress_setup
        local before
        before=$(upstream_seen udp53.log)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py udp "$EG_UP"
        expect_rc 0 "the client"
        local k
        for k in sendto_literal sendmsg_literal sendto_synthetic sendmsg_synthetic sendto_synthetic53 \
                sendmsg_synthetic53; do
                expect_eq EACCES "$(field $k)" "UDP $k"
        done
        # EPERM: the kernel egress floor refuses the datagram socket's connect to a non-loopback address
        expect_match "$(field connected_send)" '^(EACCES|ENETUNREACH|EDESTADDRREQ|EHOSTUNREACH|EPERM)$' \
                "send() on a datagram socket connected to the synthetic address"
        expect_audit "$AUDIT" "UDP to the literal" reason=ip_literal_blocked syscall=sendto "destination=$EG_UP:53"
        expect_audit "$AUDIT" "UDP to the synthetic address" reason=egress_blocked syscall=sendto \
                host=$UPSTREAM
        expect_audit "$AUDIT" "sendmsg to the literal" reason=ip_literal_blocked syscall=sendmsg
        expect_eq "$before" "$(upstream_seen udp53.log)" "datagrams the UDP recorder saw"
        # the stub answers over UDP and TCP
        local p
        for p in udp tcp; do
                expect_match "$(field "dns_${p}_upstream_1")" '^id=4660 rcode=0 answers=198\.18\.[0-9]+\.[0-9]+$' \
                        "A query over $p"
                expect_match "$(field "dns_${p}_upstream_28")" '^id=4660 rcode=0 answers=fdc0:d0::[0-9a-f:]+$' \
                        "AAAA query over $p"
                expect_eq "id=4660 rcode=3 answers=-" "$(field "dns_${p}_other_1")" "unlisted name over $p"
        done
}

it_test fastopen_through_gate
fastopen_through_gate() {
        egress_setup
        # TCP fast open: sendto(MSG_FASTOPEN) to the synthetic address connects through the gate
        # (a blocking socket: the gate connects, then sends the data itself)
        crun "${RUNARGS[@]}" -- python3 -c '
import select, socket
a = socket.getaddrinfo("'"$UPSTREAM"'", 443, socket.AF_INET, socket.SOCK_STREAM)[0][4]
s = socket.socket()
try:
    n = s.sendto(b"\x16\x03\x01", socket.MSG_FASTOPEN, a)
    print("sent", n)
    print("peer %s:%d" % s.getpeername())
except OSError as e:
    print("error", e.errno)
s.close()
s = socket.socket()
s.setblocking(False)
try:
    n = s.sendto(b"\x16\x03\x01", socket.MSG_FASTOPEN, a)
    print("nb_sent", n)
except OSError as e:
    print("nb_error", e.errno)
select.select([], [s], [], 10)
print("nb_peer %s:%d" % s.getpeername())
s.close()
b = socket.getaddrinfo("'"$UPSTREAM"'", 80, socket.AF_INET, socket.SOCK_STREAM)[0][4]
s = socket.socket()
try:
    s.sendto(b"x", socket.MSG_FASTOPEN, b)
    print("port80 sent")
except OSError as e:
    print("port80", e.errno)
s = socket.socket()
try:
    s.sendto(b"x", socket.MSG_FASTOPEN, ("'"$EG_UP"'", 443))
    print("literal sent")
except OSError as e:
    print("literal", e.errno)
'
        expect_rc 0 "the client"
        expect_eq 3 "$(field sent)" "bytes sent with MSG_FASTOPEN"
        expect_eq "$EG_UP:443" "$(field peer)" "getpeername after MSG_FASTOPEN"
        expect_eq 115 "$(field nb_error)" "non-blocking MSG_FASTOPEN: EINPROGRESS"
        expect_eq "$EG_UP:443" "$(field nb_peer)" "getpeername after a non-blocking MSG_FASTOPEN"
        expect_eq 13 "$(field port80)" "MSG_FASTOPEN to port 80"
        expect_eq 13 "$(field literal)" "MSG_FASTOPEN to the raw address"
        expect_audit "$AUDIT" "fast open" reason=egress_allowed syscall=sendto "resolved=$EG_UP:443"
}

it_test upstream_refused_connect_failed
upstream_refused_connect_failed() {
        egress_setup
        # the name now answers the host's side of the veth (allowed by the policy's /30), where
        # nothing listens on 443: the gate's connect fails and the child sees why
        if [ -n "$(ss -Hltn 'sport = :443' 2>/dev/null)" ]; then
                skip "something listens on port 443 of the host"
        fi
        write_hosts "$HOSTS" "$UPSTREAM $EG_HOST_SIDE"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect-blocking "$UPSTREAM" 443
        expect_rc 0 "the client"
        expect_eq ECONNREFUSED "$(field connect)" "a blocking connect when the upstream refuses"
        expect_audit "$AUDIT" "the refused connect" reason=connect_failed "resolved=$EG_HOST_SIDE:443"
        expect_eq 0 "$(audit_count "$AUDIT" reason=egress_allowed)" "egress_allowed records"
        # non-blocking: the refusal arrives later, through SO_ERROR
        crun "${RUNARGS[@]}" -- python3 /eg/client.py connect "$UPSTREAM" 443
        expect_eq ECONNREFUSED "$(field connect)" "a non-blocking connect when the upstream refuses"
}

it_test slow_upstream
slow_upstream() {
        egress_setup
        # the name answers an address where a connect stays in progress
        policy "$POLICY" "$HOSTS" "10.213.$EG_NET.8/30"
        write_hosts "$HOSTS" "$UPSTREAM $EG_BLACKHOLE"
        crun "${RUNARGS[@]}" -- python3 /eg/client.py slow
        expect_rc 0 "the client"
        # a blocking connect honours SO_SNDTIMEO, as the kernel's does (EINPROGRESS when it expires)
        expect_match "$(field sndtimeo)" '^EINPROGRESS [0-2]\.[0-9]$' "blocking connect with SO_SNDTIMEO 1 s"
        expect_audit "$AUDIT" "the timed-out connect" reason=connect_failed "resolved=$EG_BLACKHOLE:443"
        # a second connect() while the first is in progress: the kernel says EALREADY, and the
        # gate must not open another upstream connection in place of the first
        expect_eq EINPROGRESS "$(field nb_first)" "non-blocking connect"
        expect_eq EALREADY "$(field nb_again)" "connect() again while in progress"
        expect_eq EALREADY "$(field nb_third)" "connect() a third time while in progress"
        expect_eq 1 "$(audit_count "$AUDIT" reason=egress_allowed)" \
                "egress_allowed records (upstream connections opened) for one non-blocking socket"
        # the sandbox's time runs out while the sentry is still connecting: cordon ends on time
        local t0 t1
        t0=$(date +%s%N)
        crun "${RUNARGS[@]}" --timeout 2s -- python3 /eg/client.py connect-blocking "$UPSTREAM" 443
        t1=$(date +%s%N)
        expect_rc 124 "cordon --timeout 2s around a blocking connect that never completes"
        expect_true "cordon took $(((t1 - t0) / 1000000)) ms to end (want < 8000)" test $(((t1 - t0) / 1000000)) -lt 8000
}

# The gate's resolver is still resolving a rule's name when the command ends: here its hosts
# file is a FIFO nobody writes, as an upstream DNS server that never answers would be. cordon
# ends at once with the command's status: it neither waits for that resolution nor for the
# worker that asked for it (which used to hold the engine's stop for a second, and the resolver's
# join for as long as the resolution took: here, for ever).
it_test resolution_in_flight_at_the_end
resolution_in_flight_at_the_end() {
        local fifo="$IT_TMP/hosts.fifo" pol="$IT_TMP/policy.json" t0 t1
        mkfifo "$fifo" || fail "mkfifo"
        cat >"$pol" <<EOF
{"networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "egress tests"}],
                   "testing": {"hostsFile": "$fifo"}}}
EOF
        t0=$(date +%s%N)
        IT_CMD_TIMEOUT=20 crun --policy "$pol" -- sh -c \
                "python3 -c 'import socket; socket.create_connection((\"$UPSTREAM\", 443), timeout=60)' & sleep 1; exit 7"
        t1=$(date +%s%N)
        expect_rc 7 "cordon ends with the command's status"
        expect_true "cordon took $(((t1 - t0) / 1000000)) ms to end (want < 4000)" test $(((t1 - t0) / 1000000)) -lt 4000
}

# Many connections at once: each gets a relay and an upstream connection of its own (the relays'
# loopback pairs come from one listener per gate, made one at a time; the relay threads are a
# pool), and every one is answered.
it_test concurrent_connects_own_upstream
concurrent_connects_own_upstream() {
        egress_setup
        local before
        before=$(upstream_seen https.log)
        crun "${RUNARGS[@]}" -- python3 /eg/client.py many 24
        expect_rc 0 "the client"
        expect_eq 24 "$(field answered)" "connections answered"
        expect_eq 24 "$(field distinct)" "distinct upstream connections (peer addresses the upstream saw)"
        expect_eq - "$(field errors)" "errors"
        expect_eq $((before + 24)) "$(upstream_seen https.log)" "connections the upstream saw"
        expect_eq 24 "$(audit_count "$AUDIT" reason=egress_allowed)" "egress_allowed records"
}

# The gate's loopback listener (the relays' pairs are made through it, in the host's namespace):
# a host process that connects to it is turned away without a byte and without disturbing the
# sandbox's next connection; neither the sandbox nor a second sandbox can reach it (their
# 127.0.0.1 and ::1 are their own).
it_test relay_listener_strangers
relay_listener_strangers() {
        egress_setup
        command -v ss >/dev/null || skip "no ss(8)"
        local box ports="" p pid
        box=$(scratch_dir box)
        bg_cordon "$IT_TMP/bg.out" "${RUNARGS[@]}" --bind "$box:/box" -- python3 /eg/client.py stranger /box
        wait_until 20 test -e "$box/ready" || fail "the first connection did not happen: $(cat "$IT_TMP/bg.out")"
        # the sentry's listening sockets in the host's namespace (the sentry is cordon itself)
        pid=$BG_CORDON
        ports=$(ss -Htlnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | sed 's/.*://' | sort -u | tr '\n' ' ')
        [ -n "$ports" ] || fail "no listener of the sentry ($pid) found: $(ss -Htlnp)"
        printf '%s\n' $ports >"$box/ports"
        # strangers on the host's loopback, each sending what a client would, held open
        "$(host_python)" - "$box" $ports >"$IT_TMP/strangers.out" 2>&1 <<'PY' &
import os, socket, sys, time
box, ports = sys.argv[1], sys.argv[2:]
socks = []
for p in ports:
    for h in ("127.0.0.1", "::1"):
        try:
            s = socket.create_connection((h, int(p)), timeout=5)
            s.sendall(b"\x16\x03\x01\x00\x05hello")
            socks.append((h, p, s))
        except OSError:
            pass
print("connected", len(socks), flush=True)
open(os.path.join(box, "go"), "w").close()
for h, p, s in socks:
    s.settimeout(15)
    try:
        d = s.recv(4096)
        print("stranger", "eof" if not d else "got %d bytes" % len(d), flush=True)
    except ConnectionResetError:
        print("stranger", "reset", flush=True)
    except OSError as e:
        print("stranger", "error", e, flush=True)
PY
        local spid=$!
        wait "$BG_PID"
        RC=$?
        wait "$spid"
        OUT=$(cat "$IT_TMP/bg.out")
        ERR=$OUT
        expect_rc 0 "the sandbox's client"
        expect_eq "$EG_TOKEN" "$(field first)" "the first connection's body"
        expect_eq "$EG_TOKEN" "$(field second)" "the connection made after the strangers came"
        expect_match "$(cat "$IT_TMP/strangers.out")" "^connected [1-9]" "strangers reached the listener"
        expect_not_contains "$(cat "$IT_TMP/strangers.out")" "got " "a stranger was sent bytes"
        expect_not_contains "$(cat "$IT_TMP/strangers.out")" "error" "a stranger's socket"
        for p in $ports; do
                expect_eq ECONNREFUSED "$(field "inside_127.0.0.1_$p" | sed 's/ .*//')" "the sandbox to 127.0.0.1:$p"
                expect_eq ECONNREFUSED "$(field "inside_::1_$p" | sed 's/ .*//')" "the sandbox to [::1]:$p"
                crun "${RUNARGS[@]}" -- python3 /eg/client.py connect-addr 127.0.0.1 "$p"
                expect_eq ECONNREFUSED "$(field connect)" "a second sandbox to 127.0.0.1:$p"
        done
}

it_test audit_lines_valid_json
audit_lines_valid_json() {
        egress_setup
        crun "${RUNARGS[@]}" -- python3 /eg/client.py mix "$EG_UP"
        expect_rc 0 "the client"
        expect_eq "$EG_TOKEN" "$(field get)" "the GET"
        expect_eq "$(printf 'id=4660 rcode=3 answers=-\nid=4660 rcode=3 answers=-\nid=4660 rcode=3 answers=-')" \
                "$(printf '%s\n' "$OUT" | sed -n 's/^odd //p')" "NXDOMAIN for names with quotes and backslashes"
        local check
        check=$("$(host_python)" - "$AUDIT" <<'EOF'
import json, re, sys
keys = ["time", "sandbox", "pid", "syscall", "destination", "host", "resolved", "decision", "reason"]
reasons = {"egress_allowed", "dns_blocked", "ssrf_blocked", "port_blocked", "ip_literal_blocked",
           "egress_blocked", "test_override", "dns_answered", "resolve_failed", "connect_failed"}
bad, seen, n = [], set(), 0
for i, line in enumerate(open(sys.argv[1]), 1):
    n += 1
    try:
        r = json.loads(line)
    except ValueError as e:
        bad.append("line %d is not JSON (%s)" % (i, e))
        continue
    if not isinstance(r, dict):
        bad.append("line %d is not an object" % i)
        continue
    missing = [k for k in keys if k not in r]
    if missing:
        bad.append("line %d lacks %s" % (i, ",".join(missing)))
    if r.get("decision") not in ("allow", "deny"):
        bad.append("line %d: decision %r" % (i, r.get("decision")))
    if r.get("reason") not in reasons:
        bad.append("line %d: reason %r" % (i, r.get("reason")))
    if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)$", str(r.get("time"))):
        bad.append("line %d: time %r" % (i, r.get("time")))
    if not isinstance(r.get("sandbox"), str) or not r.get("sandbox"):
        bad.append("line %d: sandbox %r" % (i, r.get("sandbox")))
    if not isinstance(r.get("pid"), int):
        bad.append("line %d: pid %r" % (i, r.get("pid")))
    if (r.get("decision") == "allow") != (r.get("reason") in ("egress_allowed", "test_override", "dns_answered", "connect_failed")):
        bad.append("line %d: decision %s with reason %s" % (i, r.get("decision"), r.get("reason")))
    seen.add(r.get("reason"))
print("lines", n)
print("reasons", " ".join(sorted(x for x in seen if x)))
for b in bad[:10]:
    print("bad", b)
EOF
        )
        printf '%s\n' "$check" | sed 's/^/  check| /' >&2
        expect_not_contains "$check" "bad " "every audit line is a JSON object with the keys"
        local r
        for r in egress_allowed test_override dns_answered dns_blocked port_blocked ip_literal_blocked \
                egress_blocked; do
                expect_match "$check" "^reasons .*\\b$r\\b" "a $r record"
        done
        # the odd names come back intact from the JSON
        local long
        long=$(printf '%s' "$(printf '\\%.0s' {1..31})$(printf '"%.0s' {1..32})")
        long="$long.$long.$long.$(printf 'y%.0s' {1..61})"
        expect_audit "$AUDIT" "a name with a quote and a backslash" reason=dns_blocked \
                'destination=q"uote\back.cordon.test'
        expect_audit "$AUDIT" "a name with JSON punctuation" reason=dns_blocked \
                "destination={}[],:$(printf 'x%.0s' {1..50}).cordon.test"
        expect_audit "$AUDIT" "a 253-character name of backslashes and quotes" reason=dns_blocked "destination=$long"
        # one sandbox, one id
        expect_eq 1 "$("$(host_python)" -c 'import json,sys; print(len({json.loads(l)["sandbox"] for l in open(sys.argv[1])}))' "$AUDIT")" \
                "distinct sandbox ids"
}

# =============================================================================================

# tests/integration/broker.sh runs its own tests on this fixture: sourced, this file stops here
if [ -n "${EG_LIBRARY:-}" ]; then
        IT_NAMES=()
        return 0
fi

if [ -n "${IT_RUN_ONE:-}" ]; then
        it_main "$@"
fi

trap eg_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
EG_SKIP=
EG_FIXTURE_ERROR=
eg_setup
export EG_SKIP EG_FIXTURE_ERROR EG_DIR EG_TOKEN EG_NET EG_UP EG_UP_DENIED EG_HOST_SIDE EG_BLACKHOLE
(it_main "$@")
exit $?
