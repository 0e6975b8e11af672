"""Subscribers for the PUBLISH fan-out workloads.

N connections SUBSCRIBE to one channel; a thread drains them all (one
``selectors`` loop, no parsing: every message of a run has the same size,
so bytes received / frame size = messages received).  Reading as fast as
the server writes keeps the server's output buffers small, so the server's
CPU per PUBLISH is the cost of encoding and writing each message N times.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time

import resp


def message_frame(channel: bytes, message: bytes) -> bytes:
    """The RESP2 frame a subscriber receives for one PUBLISH."""
    return (b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
            % (len(channel), channel, len(message), message))


class Subscribers:
    """``count`` subscribed connections to ``port``, drained by one thread."""

    def __init__(self, port: int, channel: bytes, count: int) -> None:
        self.channel = channel
        self.received = [0] * count          # bytes after the SUBSCRIBE reply
        self._socks: list[socket.socket] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        subscribe = resp.encode(["SUBSCRIBE", channel])
        confirm = (b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n"
                   % (len(channel), channel))
        try:
            for _ in range(count):
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                self._socks.append(sock)
                sock.sendall(subscribe)
                got = b""
                while len(got) < len(confirm):
                    chunk = sock.recv(len(confirm) - len(got))
                    if not chunk:
                        raise ConnectionError("subscriber closed before confirming")
                    got += chunk
                if got != confirm:
                    raise ConnectionError(f"SUBSCRIBE replied {got!r}")
                sock.setblocking(False)
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._drain, name="subscribers", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        sel = selectors.DefaultSelector()
        for i, sock in enumerate(self._socks):
            sel.register(sock, selectors.EVENT_READ, i)
        try:
            while not self._stop.is_set():
                for key, _ in sel.select(timeout=0.1):
                    try:
                        data = key.fileobj.recv(1 << 20)
                    except BlockingIOError:
                        continue
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    with self._lock:
                        self.received[key.data] += len(data)
        finally:
            sel.close()

    def totals(self) -> list[int]:
        with self._lock:
            return list(self.received)

    def wait_for(self, expected: list[int], timeout: float = 30.0) -> list[int]:
        """The byte counts once they reach ``expected`` (or at the timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.totals()
            if all(a >= b for a, b in zip(now, expected)) or time.monotonic() > deadline:
                return now
            time.sleep(0.02)

    def close(self) -> None:
        self._stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(timeout=5)
        for sock in self._socks:
            sock.close()
        self._socks.clear()
