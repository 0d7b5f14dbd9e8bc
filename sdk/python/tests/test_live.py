"""The Python SDK against a live `cordon serve` (CORDON_API_SOCKET names its unix socket;
tests/integration/api.sh starts one). Skipped without it."""

import base64
import os
import unittest

import cordon

SOCK = os.environ.get("CORDON_API_SOCKET")
URL, TOKEN = os.environ.get("CORDON_API_URL"), os.environ.get("CORDON_API_TOKEN")


@unittest.skipUnless(SOCK, "CORDON_API_SOCKET is not set (no live server)")
class LiveTest(unittest.TestCase):
    def setUp(self):
        self.client = cordon.Client(socket_path=SOCK)
        self.sb = self.client.sandboxes.create({"ttlMs": 120000, "requestedIsolation": "standard"})
        self.addCleanup(self._terminate)

    def _terminate(self):
        try:
            self.sb.terminate()
        except cordon.CordonError:
            pass

    def test_the_mission_shape(self):
        self.assertRegex(self.sb.id, "^[0-9a-f]{16}$")
        self.assertEqual(self.sb.isolation["tier"], "standard")
        self.sb.files.write({"path": "/tmp/hello.sh", "contentBase64": base64.b64encode(b"echo hello $1\n").decode()})
        r = self.sb.exec({"argv": ["sh", "/tmp/hello.sh", "sdk"], "timeoutMs": 10000})
        self.assertEqual(r["exitCode"], 0)
        self.assertEqual(r["stdout"], "hello sdk\n")
        self.assertEqual(self.sb.files.read("/tmp/hello.sh"), b"echo hello $1\n")
        self.assertIn("hello.sh", [e["name"] for e in self.sb.files.list("/tmp")])

    def test_run_events_resume_without_loss(self):
        run = self.sb.runs.start({"argv": ["sh", "-c", "for i in 1 2 3 4 5; do echo n$i; done"]})
        events = list(self.sb.runs.events(run, {"afterSequence": 0}))
        self.assertEqual(events[-1]["type"], "run_exited")
        texts = [e["text"] for e in events if e["type"] == "output"]
        self.assertEqual(texts, ["n1", "n2", "n3", "n4", "n5"])
        # resumed from the middle: the rest, each once
        mid = events[2]["seq"]
        rest = list(self.sb.runs.events(run, {"afterSequence": mid}))
        self.assertEqual([e["seq"] for e in rest], [e["seq"] for e in events[3:]])
        self.assertEqual(self.sb.runs.get(run)["status"], "exited")

    def test_large_files_stream_both_ways(self):
        import hashlib
        import tempfile
        data = os.urandom(12 << 20)  # over the JSON body's limit: streamed with PUT
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "src")
            with open(src, "wb") as f:
                f.write(data)
            self.assertEqual(self.sb.files.upload("/tmp/big", src, mode=0o600), {"path": "/tmp/big", "size": len(data)})
            r = self.sb.exec({"argv": ["sha256sum", "/tmp/big"]})
            self.assertEqual(r["stdout"].split()[0], hashlib.sha256(data).hexdigest())
            dst = os.path.join(d, "dst")
            self.assertEqual(self.sb.files.download("/tmp/big", dst)["size"], len(data))
            with open(dst, "rb") as f:
                self.assertEqual(f.read(), data)
            # a file object from its position; bytes through write(content=...)
            with open(src, "rb") as f:
                f.seek(len(data) - 100)
                self.assertEqual(self.sb.files.upload("/tmp/tail", f)["size"], 100)
            self.assertEqual(self.sb.files.read("/tmp/tail"), data[-100:])
            # a pipe: its size given, or refused before anything is sent
            r, w = os.pipe()
            os.write(w, b"from a pipe, and more")
            os.close(w)
            with os.fdopen(r, "rb") as f:
                with self.assertRaises(TypeError):
                    self.sb.files.upload("/tmp/pipe", f)
                self.assertEqual(self.sb.files.upload("/tmp/pipe", f, size=11)["size"], 11)
                self.assertEqual(f.read(), b", and more")  # never more than its size is taken
            self.assertEqual(self.sb.files.read("/tmp/pipe"), b"from a pipe")
            self.assertEqual(self.sb.files.write(path="/tmp/w", content=data[:3 << 20])["size"], 3 << 20)
            self.assertEqual([e["mode"] for e in self.sb.files.list("/tmp/big")], [0o600])
            # a download that fails leaves no file behind
            with self.assertRaises(cordon.CordonError) as cm:
                self.sb.files.download("/tmp/missing", os.path.join(d, "missing"))
            self.assertEqual(cm.exception.status, 404)
            self.assertFalse(os.path.exists(os.path.join(d, "missing")))

    def test_exec_outlives_the_client_timeout(self):
        # an exec waits as long as its run takes: the client's timeout closing the
        # connection midway would have the server cancel the run
        slow = cordon.Client(socket_path=SOCK, timeout=1)
        sb = slow.sandboxes.get(self.sb.id)
        self.assertEqual(sb.exec({"argv": ["sh", "-c", "sleep 2; echo done"]})["stdout"], "done\n")
        self.assertEqual(sb.exec({"argv": ["sh", "-c", "sleep 2; echo done"], "timeoutMs": 10000})["stdout"], "done\n")

    def test_errors_are_raised_with_their_code(self):
        with self.assertRaises(cordon.CordonError) as cm:
            self.sb.exec({"argv": "not a list"})
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "argv"))
        with self.assertRaises(cordon.CordonError) as cm:
            self.client.sandboxes.get("0123456789abcdef")
        self.assertEqual(cm.exception.status, 404)

    def test_snapshot_and_restore(self):
        self.sb.exec({"argv": ["sh", "-c", "echo kept > /root/kept"]})
        data, digest = self.sb.snapshot()
        self.assertRegex(digest, "^sha256:[0-9a-f]{64}$")
        sb2 = self.client.sandboxes.create(
            {"ttlMs": 120000, "fromSnapshot": {"archiveBase64": base64.b64encode(data).decode(), "digest": digest}}
        )
        try:
            self.assertEqual(sb2.exec({"argv": ["cat", "/root/kept"]})["stdout"], "kept\n")
        finally:
            sb2.terminate()

    def test_host_and_terminate(self):
        self.assertIn("tiers", self.client.host())
        self.sb.terminate()
        with self.assertRaises(cordon.CordonError) as cm:
            self.sb.inspect()
        self.assertEqual(cm.exception.code, "not_found")


@unittest.skipUnless(URL and TOKEN, "CORDON_API_URL and CORDON_API_TOKEN are not set (no TCP server)")
class TcpTokenTest(unittest.TestCase):
    def test_a_sandbox_token_acts_on_its_sandbox_only(self):
        admin = cordon.Client(url=URL, token=TOKEN)
        a = admin.sandboxes.create({"ttlMs": 120000})
        self.addCleanup(a.terminate)
        b = admin.sandboxes.create({"ttlMs": 120000})
        self.addCleanup(b.terminate)
        scoped = cordon.Client(url=URL, token=a.token)
        mine = scoped.sandboxes.get(a.id)
        self.assertEqual(mine.exec({"argv": ["echo", "tcp"]})["stdout"], "tcp\n")
        self.assertEqual([s.id for s in scoped.sandboxes.list()], [a.id])
        with self.assertRaises(cordon.CordonError) as cm:
            scoped.sandboxes.get(b.id)
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Client(url=URL, token="not-the-token").host()
        self.assertEqual(cm.exception.status, 401)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(SOCK, "CORDON_API_SOCKET is not set (no live server)")
class ProcessesAndPortsTest(unittest.TestCase):
    def setUp(self):
        self.client = cordon.Client(socket_path=SOCK)
        self.sb = self.client.sandboxes.create({"ttlMs": 120000, "requestedIsolation": "standard"})
        self.addCleanup(self._terminate)

    def _terminate(self):
        try:
            self.sb.terminate()
        except cordon.CordonError:
            pass

    def test_processes_and_ports(self):
        import socket
        import time
        import urllib.request
        self.sb.runs.start({"argv": ["sh", "-c", "mkdir -p /tmp/w && echo sdk-page >/tmp/w/index.html && "
                                     "exec python3 -m http.server 3000 --bind 127.0.0.1 --directory /tmp/w"]})
        p = self.sb.ports.expose(3000)
        self.assertRegex(p["listen"], r"^127\.0\.0\.1:[0-9]+$")
        self.assertEqual([x["port"] for x in self.sb.ports.list()], [3000])
        body = b""
        for _ in range(100):
            try:
                body = urllib.request.urlopen("http://%s/" % p["listen"], timeout=5).read()
                break
            except OSError:
                time.sleep(0.1)
        self.assertEqual(body, b"sdk-page\n")
        server = [x for x in self.sb.processes.list() if "http.server" in x["command"]]
        self.assertEqual(len(server), 1)
        self.assertEqual(server[0]["run"], "r1")
        self.sb.processes.signal(server[0]["pid"], "KILL")
        with self.assertRaises(cordon.CordonError) as cm:
            self.sb.processes.signal(os.getpid() + 100000, "KILL")
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(cordon.CordonError) as cm:
            self.sb.ports.expose(3000)
        self.assertEqual(cm.exception.status, 409)
        with self.assertRaises(cordon.CordonError) as cm:
            self.sb.ports.expose(70000)
        self.assertEqual((cm.exception.status, cm.exception.field), (400, "port"))
        self.sb.ports.close(3000)
        self.assertEqual(self.sb.ports.list(), [])
        host, port = p["listen"].rsplit(":", 1)
        with self.assertRaises(OSError):
            socket.create_connection((host, int(port)), timeout=3)
