"""A client for cordon's sandbox API (`cordon serve`), standard library only.

    import cordon
    client = cordon.Client()                       # the unix socket /run/cordon/api.sock
    client = cordon.Client(url="http://127.0.0.1:8700", token="...")   # TCP, with a token
    client = cordon.Client(url="https://proxy.example/cordon", token="...")  # behind a proxy's prefix
    sb = client.sandboxes.create({"requestedIsolation": "hardened", "ttlMs": 600000})
    sb.files.write({"path": "/tmp/x.py", "contentBase64": base64.b64encode(b"print(1)").decode()})
    r = sb.exec({"argv": ["python3", "/tmp/x.py"], "timeoutMs": 10000})
    run_id = sb.runs.start({"argv": ["make", "test"]})
    for ev in sb.runs.events(run_id, {"afterSequence": 0}):
        print(ev["seq"], ev["type"])
    sb.terminate()

Every call returns the API's JSON (dicts); an error raises CordonError with the
status and the error's code, message and field.
"""

import base64
import http.client
import json
import os
import socket
import ssl
import stat
import time
import urllib.parse

__all__ = ["Client", "Sandbox", "CordonError"]

DEFAULT_SOCKET = "/run/cordon/api.sock"
_DEFAULT = object()  # a call's timeout: the client's own


class CordonError(Exception):
    """An error the API answered with: {"error": {"code", "message", "field"}}."""

    def __init__(self, status, error):
        self.status = status
        self.error = error or {}
        self.code = self.error.get("code")
        self.field = self.error.get("field")
        super().__init__("%s %s: %s" % (status, self.code, self.error.get("message")))


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def _error(status, payload):
    """The CordonError of an error reply. The HTTP layer's own (libmicrohttpd's 400, 431 and
    505, answered before a request reaches cordon) have a small HTML body, not the API's JSON:
    those are code "http_<status>" with the body as the message."""
    try:
        err = json.loads(payload).get("error")
    except (ValueError, AttributeError):
        err = None
    if not isinstance(err, dict):
        err = {"code": "http_%d" % status, "message": payload.decode(errors="replace")}
    return CordonError(status, err)


def _seg(v):
    """An id in a route, as one segment: whatever it holds (a slash, "..", "?") can name no
    other route (the server refuses an encoded slash or NUL in a path)."""
    return urllib.parse.quote(str(v), safe="")


def _spec(spec, kw):
    d = dict(spec or {})
    d.update(kw)
    return d


class Client:
    """The API at a unix socket (socket_path) or at url (http://HOST:PORT, or https:// through
    a TLS proxy, verified against the system's CAs or ssl_context) with a token. A path in url
    (http://HOST:PORT/cordon, a reverse proxy's prefix) goes before every route."""

    RECONNECTS = 5  # a stream's reconnects in a row that bring nothing, before it gives up

    def __init__(self, socket_path=None, url=None, token=None, timeout=300, ssl_context=None):
        self.socket_path = socket_path if socket_path or url else DEFAULT_SOCKET
        self.url = urllib.parse.urlsplit(url) if url else None
        if self.url and self.url.scheme not in ("http", "https"):
            # anything else would go out as plain HTTP, the token with it
            raise ValueError("url: expected http:// or https://, not %r" % url)
        if self.url and (self.url.query or self.url.fragment):
            # a route appended after a query would be no path at all
            raise ValueError("url: a query or fragment cannot prefix the API's routes: %r" % url)
        # the prefix a reverse proxy serves the API under ("" for none), before every route
        self.prefix = self.url.path.rstrip("/") if self.url else ""
        self.ssl_context = ssl_context
        self.token = token
        self.timeout = timeout
        self.sandboxes = _Sandboxes(self)

    def _connection(self, timeout=_DEFAULT):
        t = self.timeout if timeout is _DEFAULT else timeout
        if self.url and self.url.scheme == "https":
            ctx = self.ssl_context or ssl.create_default_context()
            return http.client.HTTPSConnection(self.url.hostname, self.url.port or 443, timeout=t, context=ctx)
        if self.url:
            return http.client.HTTPConnection(self.url.hostname, self.url.port or 80, timeout=t)
        return _UnixConnection(self.socket_path, t)

    def _headers(self, extra=None):
        h = {"Accept": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(extra or {})
        return h

    def request(self, method, path, body=None, raw=None, query=None, headers=None, size=None, timeout=_DEFAULT):
        """One call: the parsed JSON reply (or the raw bytes of a file or snapshot). raw: bytes,
        or a binary file object of size bytes from its position (streamed, never held whole)."""
        path = self.prefix + path
        if query:
            path += "?" + urllib.parse.urlencode(query)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = self._headers(headers)
        if data is not None:
            h["Content-Type"] = "application/octet-stream" if raw is not None else "application/json"
            h["Content-Length"] = str(size if size is not None else len(data))
        c = self._connection(timeout)
        try:
            c.request(method, path, body=data, headers=h)
            resp = c.getresponse()
            payload = resp.read()
            ctype = resp.getheader("Content-Type", "")
            if resp.status >= 400:
                raise _error(resp.status, payload)
            if ctype.startswith("application/json"):
                return json.loads(payload)
            return payload, dict(resp.getheaders())
        finally:
            c.close()

    def host(self):
        """What `cordon check --json` says, with the tiers this host can give."""
        return self.request("GET", "/v1/host")

    def events(self, path, after_sequence=0, follow=False, reconnect=True):
        """Events of path (a sandbox's or a run's) after after_sequence, each once: a
        stream cut short is resumed from the last seq seen; RECONNECTS failed attempts in a
        row (the server gone) raise the last error instead of trying forever."""
        after = after_sequence
        failures = 0
        while True:
            if failures:
                time.sleep(min(0.2 * 2 ** (failures - 1), 2.0))
            c = self._connection()
            try:
                q = {"afterSequence": after}
                if follow:
                    q["follow"] = 1
                c.request("GET", self.prefix + path + "?" + urllib.parse.urlencode(q),
                          headers=self._headers({"Accept": "application/x-ndjson"}))
                resp = c.getresponse()
                if resp.status >= 400:
                    raise _error(resp.status, resp.read())
                for line in resp:
                    line = line.strip()
                    if not line:
                        continue
                    ev = json.loads(line)
                    after = ev["seq"]
                    failures = 0
                    yield ev
                return
            except (ConnectionError, http.client.HTTPException, socket.timeout):
                failures += 1
                if not reconnect or failures > self.RECONNECTS:
                    raise
            finally:
                c.close()


class _Sandboxes:
    def __init__(self, client):
        self._c = client

    def create(self, spec=None, **kw):
        """Creates a sandbox: the policy's fields plus requestedIsolation, ttlMs and
        idempotencyKey. The Sandbox carries its own token (tcp)."""
        d = self._c.request("POST", "/v1/sandboxes", body=_spec(spec, kw))
        return Sandbox(self._c, d["id"], d)

    def list(self):
        return [Sandbox(self._c, s["id"], s) for s in self._c.request("GET", "/v1/sandboxes")["sandboxes"]]

    def get(self, sandbox_id):
        return Sandbox(self._c, sandbox_id, self._c.request("GET", "/v1/sandboxes/" + _seg(sandbox_id)))


class Sandbox:
    def __init__(self, client, sandbox_id, info=None):
        self._c = client
        self.id = sandbox_id
        self.info = info or {}
        self.token = self.info.get("token")
        self.isolation = self.info.get("isolation")
        self.expires_at = self.info.get("expiresAt")
        self._path = "/v1/sandboxes/" + _seg(sandbox_id)
        self.files = _Files(self)
        self.runs = _Runs(self)
        self.approvals = _Approvals(self)
        self.processes = _Processes(self)
        self.ports = _Ports(self)

    def inspect(self):
        return self._c.request("GET", self._path)

    def exec(self, spec=None, **kw):
        """Runs {argv, env, cwd, timeoutMs, stdinBase64} and waits: {runId, exitCode,
        signal, stdout, stderr, truncated, timedOut}. It waits as long as the run takes (with
        timeoutMs, that and a minute more at most). With cancelOnDisconnect=True, an interrupt
        (the connection closed before the reply) has the server cancel the run; else it goes on."""
        d = _spec(spec, kw)
        t = d.get("timeoutMs")
        wait = max(self._c.timeout, t / 1000 + 60) if isinstance(t, (int, float)) and t > 0 else None
        return self._c.request("POST", self._path + "/exec", body=d, timeout=wait)

    def events(self, spec=None, **kw):
        d = _spec(spec, kw)
        return self._c.events(self._path + "/events", d.get("afterSequence", 0), d.get("follow", False))

    def pause(self):
        return self._c.request("POST", self._path + "/pause")

    def resume(self):
        return self._c.request("POST", self._path + "/resume")

    def snapshot(self):
        """The .tar.zst bytes and their digest ("sha256:...")."""
        data, headers = self._c.request("POST", self._path + "/snapshot")
        return data, headers.get("X-Cordon-Digest")

    def terminate(self):
        return self._c.request("DELETE", self._path)


class _Limited:
    """A file object's next n bytes, as http.client reads a body: never more than the length
    the request said (a file that grows meanwhile would else send the rest as a next request)."""

    def __init__(self, f, n):
        self._f, self._left = f, n

    def read(self, amt=-1):
        amt = self._left if amt is None or amt < 0 else min(amt, self._left)
        data = self._f.read(amt) if amt else b""
        self._left -= len(data)
        return data


def _file_query(path, mode):
    q = {"path": path}
    if mode is not None:
        q["mode"] = "%o" % mode
    return q


class _Files:
    def __init__(self, sb):
        self._sb = sb

    def write(self, spec=None, **kw):
        """{path, contentBase64, mode} in JSON (at most ~750 KB), or content=bytes (sent as they
        are, any size): {path, size}."""
        d = _spec(spec, kw)
        if "content" in d:
            return self.upload(d["path"], bytes(d["content"]), mode=d.get("mode"))
        return self._sb._c.request("POST", self._sb._path + "/files", body=d)

    def upload(self, path, source, mode=None, size=None):
        """source (a local file's path, a binary file object from its position to its end, or
        bytes) streamed into path: {path, size}. It lands whole or not at all. A stream that is
        no regular file (a pipe) needs its size: exactly that many bytes are sent."""
        q = _file_query(path, mode)
        if isinstance(source, (bytes, bytearray, memoryview)):
            return self._sb._c.request("PUT", self._sb._path + "/files", raw=bytes(source), query=q)
        if isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as f:
                return self.upload(path, f, mode, size)
        if size is None:
            try:
                st = os.fstat(source.fileno())
                if not stat.S_ISREG(st.st_mode):
                    raise OSError()
                size = max(st.st_size - source.tell(), 0)
            except (OSError, AttributeError, ValueError):
                raise TypeError("upload: a stream that is no regular file needs its size (size=)") from None
        return self._sb._c.request("PUT", self._sb._path + "/files", raw=_Limited(source, size), query=q, size=size)

    def download(self, path, dest):
        """path streamed into dest (a local file's path, or a binary file object): {path, size}. A
        download cut short raises (and a dest path it made is removed): a file is never taken
        for whole."""
        if isinstance(dest, (str, os.PathLike)):
            try:
                with open(dest, "wb") as f:
                    return self.download(path, f)
            except BaseException:
                try:
                    os.unlink(dest)
                except OSError:
                    pass
                raise
        c = self._sb._c._connection()
        try:
            q = urllib.parse.urlencode({"path": path})
            c.request("GET", "%s%s/files?%s" % (self._sb._c.prefix, self._sb._path, q),
                      headers=self._sb._c._headers({"Accept": "application/octet-stream"}))
            resp = c.getresponse()
            if resp.status >= 400:
                raise _error(resp.status, resp.read())
            size = 0
            while True:
                # a chunked reply cut short raises IncompleteRead here
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                dest.write(chunk)
                size += len(chunk)
            return {"path": path, "size": size}
        finally:
            c.close()

    def read(self, path):
        """The whole file in memory (download streams it instead)."""
        data, _ = self._sb._c.request("GET", self._sb._path + "/files", query={"path": path})
        return data

    def list(self, path):
        return self._sb._c.request("GET", self._sb._path + "/files", query={"path": path, "list": 1})["entries"]


class _Runs:
    def __init__(self, sb):
        self._sb = sb

    def start(self, spec=None, **kw):
        """Starts {argv, env, cwd, timeoutMs, idempotencyKey} in the background: its run id."""
        return self._sb._c.request("POST", self._sb._path + "/runs", body=_spec(spec, kw))["runId"]

    def get(self, run_id):
        return self._sb._c.request("GET", "%s/runs/%s" % (self._sb._path, _seg(run_id)))

    def cancel(self, run_id):
        return self._sb._c.request("POST", "%s/runs/%s/cancel" % (self._sb._path, _seg(run_id)))

    def events(self, run_id, spec=None, **kw):
        """The run's events after afterSequence until it ends (follow, default True)."""
        d = _spec(spec, kw)
        return self._sb._c.events("%s/runs/%s/events" % (self._sb._path, _seg(run_id)), d.get("afterSequence", 0),
                                  d.get("follow", True))


class _Approvals:
    def __init__(self, sb):
        self._sb = sb

    def list(self):
        return self._sb._c.request("GET", self._sb._path + "/approvals")["approvals"]

    def approve(self, request_id, remember=False):
        """The operator's decision: needs the admin token (or the unix socket); with a
        sandbox's own token it raises CordonError 403 (that token may list and deny only)."""
        return self._sb._c.request("POST", "%s/approvals/%s/approve" % (self._sb._path, _seg(request_id)),
                                   body={"remember": remember})

    def deny(self, request_id):
        return self._sb._c.request("POST", "%s/approvals/%s/deny" % (self._sb._path, _seg(request_id)), body={})


class _Processes:
    def __init__(self, sb):
        self._sb = sb

    def list(self):
        """Every process of the sandbox: [{pid, ppid, run, uid, gid, state, startedAt, cpuSeconds,
        memoryBytes, name, command}], pids as the sandbox numbers them."""
        return self._sb._c.request("GET", self._sb._path + "/processes")["processes"]

    def signal(self, pid, signal="TERM"):
        """Signals one process of the sandbox (its pid inside; any other is refused with 404)."""
        return self._sb._c.request("POST", "%s/processes/%d/signal" % (self._sb._path, pid), body={"signal": signal})


class _Ports:
    def __init__(self, sb):
        self._sb = sb

    def expose(self, port, listen=None):
        """Exposes a TCP port the sandbox listens on at a host address (default 127.0.0.1 and a
        free port): {port, listen, accepted, connections, warning?, note?}."""
        body = {"port": port}
        if listen is not None:
            body["listen"] = listen
        return self._sb._c.request("POST", self._sb._path + "/ports", body=body)

    def list(self):
        return self._sb._c.request("GET", self._sb._path + "/ports")["ports"]

    def close(self, port):
        return self._sb._c.request("DELETE", "%s/ports/%d" % (self._sb._path, port))
