"""The upstream for the egress benchmark: a plain TCP server (run it in the
test network namespace) that answers bench/micro/tcpc.

  upstream.py ADDR PORT READYFILE

Every connection opens with one TLS record (tcpc's minimal ClientHello: what
cordon's gate checks), skipped here. Then the first byte: P -> reply b"p" and close; S + 8-byte
little-endian length -> send that many bytes, close; K -> read to EOF,
reply b"k". Accepts and pings are served by one selector loop (no thread
per connection, so the native connect latency stays low); the bulk modes
get a thread each."""
import selectors
import socket
import struct
import sys
import threading

CHUNK = b"\0" * (1 << 18)


def bulk(s, mode):
    try:
        if mode == b"S":
            hdr = b""
            while len(hdr) < 8:
                more = s.recv(8 - len(hdr))
                if not more:
                    return
                hdr += more
            left = struct.unpack("<Q", hdr)[0]
            view = memoryview(CHUNK)
            while left > 0:
                left -= s.send(view[: min(left, len(CHUNK))])
        else:
            buf = bytearray(1 << 18)
            while s.recv_into(buf):
                pass
            s.sendall(b"k")
    except OSError:
        pass
    finally:
        s.close()


def main():
    addr, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1024)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    with open(ready, "w") as f:
        f.write("ready\n")
    while True:
        for key, _ in sel.select():
            if key.data is None:
                while True:
                    try:
                        c, _ = ls.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    c.setblocking(False)
                    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sel.register(c, selectors.EVENT_READ, "conn")
                continue
            c = key.fileobj
            try:
                # the record and the mode byte come in one write
                c.settimeout(5)
                head = c.recv(5, socket.MSG_WAITALL)
                rec = c.recv(struct.unpack(">H", head[3:5])[0], socket.MSG_WAITALL) if len(head) == 5 else b""
                mode = c.recv(1) if head[:1] == b"\x16" and rec else b""
                c.setblocking(False)
            except (OSError, struct.error):
                mode = b""
            sel.unregister(c)
            if mode == b"P":
                try:
                    c.send(b"p")
                except OSError:
                    pass
                c.close()
            elif mode in (b"S", b"K"):
                c.setblocking(True)
                threading.Thread(target=bulk, args=(c, mode), daemon=True).start()
            else:
                c.close()


if __name__ == "__main__":
    main()
