"""The Python SDK's transport without a server: what it sends where, and that it gives up."""

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
