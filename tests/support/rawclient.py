"""A raw RESP client for tests: sends argv lists, returns each reply's exact bytes.

Used by differential tests (replies compared byte for byte with redis-server)
and by protocol tests that need to see precisely what went over the wire.
"""

from __future__ import annotations

import socket
import time


def encode_command(argv: list[bytes | str | int]) -> bytes:
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        if isinstance(arg, int):
            arg = str(arg)
        if isinstance(arg, str):
            arg = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def reply_end(buf: bytes, pos: int = 0) -> int:
    """Index just past the complete reply starting at pos; -1 if incomplete."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return -1
    kind = buf[pos:pos + 1]
    head = buf[pos + 1:nl]
    after = nl + 2
    if kind in (b"+", b"-", b":", b"_", b",", b"#", b"("):
        return after
    if kind in (b"$", b"=", b"!"):
        n = int(head)
        if n < 0:
            return after
        end = after + n + 2
        return end if len(buf) >= end else -1
    if kind in (b"*", b"~", b">", b"%", b"|"):
        n = int(head)
        if n < 0:
            return after
        if kind in (b"%", b"|"):
            n *= 2
        for _ in range(n):
            after = reply_end(buf, after)
            if after < 0:
                return -1
        return after
    raise ValueError(f"bad reply type byte {kind!r} in {buf[pos:pos + 40]!r}")


class RawClient:
    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_reply(self, timeout: float | None = None) -> bytes:
        """The next complete reply's bytes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.buf:
                end = reply_end(self.buf)
                if end >= 0:
                    reply, self.buf = self.buf[:end], self.buf[end:]
                    return reply
            if deadline is not None:
                self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError(f"connection closed; unparsed: {self.buf[:200]!r}")
            self.buf += chunk

    def call(self, *argv: bytes | str | int) -> bytes:
        self.sock.sendall(encode_command(list(argv)))
        return self.read_reply()

    def pipeline(self, commands: list[list[bytes | str | int]]) -> list[bytes]:
        self.sock.sendall(b"".join(encode_command(c) for c in commands))
        return [self.read_reply() for _ in commands]

    def read_until_closed(self, timeout: float = 5.0) -> bytes:
        self.sock.settimeout(timeout)
        data = self.buf
        self.buf = b""
        while True:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return data
            data += chunk

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
