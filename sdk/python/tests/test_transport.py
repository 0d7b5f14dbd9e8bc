"""The Python SDK's transport without a server: what it sends where, and that it gives up."""

import http.server
import json
import socket
import threading
import time
import unittest

import cordon


class TransportTest(unittest.TestCase):
    def test_https_url_speaks_tls_and_never_sends_the_token_in_clear(self):
        # a TLS proxy in front of cordon serve is what SECURITY.md advises: an https URL
        # must start a TLS handshake, not send "Authorization: Bearer ..." as plain text
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        got = []

        def accept():
            c, _ = srv.accept()
            c.settimeout(5)
            try:
                got.append(c.recv(4096))
            finally:
                c.close()

        t = threading.Thread(target=accept)
        t.start()
        client = cordon.Client(url="https://127.0.0.1:%d" % srv.getsockname()[1], token="s3cr3t-token", timeout=5)
        with self.assertRaises(Exception):
            client.host()
        t.join(10)
        srv.close()
        self.assertTrue(got and got[0], "nothing was sent")
        self.assertNotIn(b"s3cr3t-token", got[0])
        self.assertEqual(got[0][:1], b"\x16", "a TLS handshake record")

    def test_an_unknown_scheme_is_refused(self):
        with self.assertRaises(ValueError):
            cordon.Client(url="ftp://127.0.0.1:21", token="x")

    def test_a_path_in_the_url_prefixes_every_route(self):
        # behind a reverse proxy that serves the API under /cordon: every call, streams too
        seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append(self.path)
                if "/events" in self.path:
                    body, ctype = b'{"seq": 1, "type": "created"}\n', "application/x-ndjson"
                else:
                    body, ctype = json.dumps({"ok": True}).encode(), "application/json"
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        t = threading.Thread(target=srv.serve_forever)
        t.start()
        try:
            for url in ("http://127.0.0.1:%d/cordon", "http://127.0.0.1:%d/cordon/"):
                client = cordon.Client(url=url % srv.server_address[1], token="x", timeout=5)
                self.assertEqual(client.host(), {"ok": True})
                sb = cordon.Sandbox(client, "0123456789abcdef")
                self.assertEqual([e["seq"] for e in sb.events()], [1])
            plain = cordon.Client(url="http://127.0.0.1:%d" % srv.server_address[1], token="x", timeout=5)
            plain.host()
        finally:
            srv.shutdown()
            t.join()
        ev = "/cordon/v1/sandboxes/0123456789abcdef/events?afterSequence=0"
        self.assertEqual(seen, ["/cordon/v1/host", ev, "/cordon/v1/host", ev, "/v1/host"])

    def test_the_http_layers_html_errors_are_cordon_errors(self):
        # libmicrohttpd answers 431 (a header block over 64 KiB) itself, with HTML
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<html><head><title>Request too big</title></head></html>"
                self.send_response(431)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        t = threading.Thread(target=srv.serve_forever)
        t.start()
        try:
            client = cordon.Client(url="http://127.0.0.1:%d" % srv.server_address[1], token="x", timeout=5)
            for call in (client.host, lambda: list(client.events("/v1/sandboxes/0123456789abcdef/events"))):
                with self.assertRaises(cordon.CordonError) as cm:
                    call()
                self.assertEqual((cm.exception.status, cm.exception.code), (431, "http_431"))
                self.assertIn("Request too big", cm.exception.error["message"])
        finally:
            srv.shutdown()
            t.join()

    def test_ids_stay_one_segment_of_their_route(self):
        # an id from elsewhere (a tenant, a log) can name no other route
        seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.do_POST()

            def do_POST(self):
                seen.append(self.command + " " + self.path)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        t = threading.Thread(target=srv.serve_forever)
        t.start()
        try:
            client = cordon.Client(url="http://127.0.0.1:%d" % srv.server_address[1], token="x", timeout=5)
            sb = client.sandboxes.get("../host?x=1")
            sb.runs.get("r1/cancel")
            sb.approvals.deny("q1/../../x")
        finally:
            srv.shutdown()
            t.join()
        p = "/v1/sandboxes/..%2Fhost%3Fx%3D1"
        self.assertEqual(seen, ["GET " + p, "GET " + p + "/runs/r1%2Fcancel",
                                "POST " + p + "/approvals/q1%2F..%2F..%2Fx/deny"])

    def test_a_query_in_the_url_is_refused(self):
        with self.assertRaises(ValueError):
            cordon.Client(url="http://127.0.0.1:8700/cordon?x=1", token="x")

    def test_events_give_up_when_the_server_is_gone(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there
        client = cordon.Client(url="http://127.0.0.1:%d" % port, token="x", timeout=2)
        start = time.monotonic()
        with self.assertRaises(OSError):
            for _ in client.events("/v1/sandboxes/0123456789abcdef/events"):
                pass
        self.assertLess(time.monotonic() - start, 60)


if __name__ == "__main__":
    unittest.main()
