"""A very small blocking RESP2 client for the benchmark's set-up and checks.

The load itself comes from redis-benchmark; this client only preloads data
(pipelined, in batches), reads INFO/CONFIG and checks replies.  It has no
dependencies so the benchmark runs with a bare Python.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from typing import Self

Arg = bytes | str | int


class RespError(Exception):
    """An error reply (``-ERR ...``).  Returned inside pipelines, raised by call()."""


class Incomplete(Exception):
    pass


def encode(argv: Sequence[Arg]) -> bytes:
    out = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        if isinstance(arg, int):
            arg = str(arg).encode()
        elif isinstance(arg, str):
            arg = arg.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def parse(buf: bytes, pos: int = 0):
    """(value, next position) of the reply at ``pos``; raises Incomplete."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        raise Incomplete
    kind = buf[pos:pos + 1]
    head = buf[pos + 1:nl]
    nxt = nl + 2
    if kind == b"+":
        return head, nxt
    if kind == b"-":
        return RespError(head.decode("utf-8", "replace")), nxt
    if kind == b":":
        return int(head), nxt
    if kind == b"$":
        size = int(head)
        if size < 0:
            return None, nxt
        if len(buf) < nxt + size + 2:
            raise Incomplete
        return buf[nxt:nxt + size], nxt + size + 2
    if kind == b"*":
        count = int(head)
        if count < 0:
            return None, nxt
        items = []
        for _ in range(count):
            item, nxt = parse(buf, nxt)
            items.append(item)
        return items, nxt
    raise ValueError(f"unexpected reply type {kind!r}: {buf[pos:pos + 60]!r}")


class Client:
    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read_one(self, raw: bool = False):
        while True:
            try:
                start = self.pos
                value, self.pos = parse(self.buf, self.pos)
                return self.buf[start:self.pos] if raw else value
            except Incomplete:
                pass
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf = self.buf[self.pos:] + chunk
            self.pos = 0

    def pipeline(self, commands: Iterable[Sequence[Arg]]) -> list:
        """Send all commands in one write, return all replies (errors as RespError)."""
        commands = list(commands)
        self.sock.sendall(b"".join(encode(c) for c in commands))
        return [self._read_one() for _ in commands]

    def call_raw(self, *argv: Arg) -> bytes:
        """The exact bytes of the reply (to compare servers byte for byte)."""
        self.sock.sendall(encode(argv))
        return self._read_one(raw=True)

    def call(self, *argv: Arg):
        self.sock.sendall(encode(argv))
        reply = self._read_one()
        if isinstance(reply, RespError):
            raise reply
        return reply


def info_fields(text: bytes) -> dict[str, str]:
    """INFO's ``name:value`` lines as a dict."""
    fields = {}
    for line in text.decode("utf-8", "replace").splitlines():
        if line and not line.startswith("#") and ":" in line:
            name, _, value = line.partition(":")
            fields[name] = value
    return fields
