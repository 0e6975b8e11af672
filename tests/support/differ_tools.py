"""Helpers of the differential tests: a second connection to each server
(``Pair``), waiting until both servers block ``n`` clients, a small RESP
reader for replies whose element order is unspecified, and redis-server's
AOF read back as commands."""

from __future__ import annotations

import glob
import os
import time

from tests.support.rawclient import RawClient, encode_command


def _ports(differ):
    return differ.ours.sock.getpeername()[1], differ.theirs.sock.getpeername()[1]


class Pair:
    """One extra connection to each server."""

    def __init__(self, differ) -> None:
        ours, theirs = _ports(differ)
        self.ours, self.theirs = RawClient(ours), RawClient(theirs)

    def send(self, *argv) -> None:
        data = encode_command(list(argv))
        self.ours.send_raw(data)
        self.theirs.send_raw(data)

    def replies(self, timeout: float = 5.0) -> tuple[bytes, bytes]:
        return self.ours.read_reply(timeout), self.theirs.read_reply(timeout)

    def call(self, *argv) -> tuple[bytes, bytes]:
        self.send(*argv)
        return self.replies()

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


def wait_blocked(differ, tidelog, n: int) -> None:
    """Until both servers have n blocked clients."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        ours = tidelog.call(lambda: tidelog.engine.blocked_clients)
        info = differ.theirs.call("INFO", "clients")
        if ours == n and b"blocked_clients:%d\r\n" % n in info:
            return
        time.sleep(0.01)
    raise AssertionError(f"not {n} blocked clients: ours {ours}, theirs {info!r}")


# -- a small RESP reader, for replies whose element order is unspecified ---------
def _parse(buf: bytes, pos: int = 0):
    kind = buf[pos:pos + 1]
    nl = buf.index(b"\r\n", pos)
    head = buf[pos + 1:nl]
    pos = nl + 2
    if kind in (b"+", b"-", b":"):
        return (kind + head), pos
    if kind == b"_":
        return None, pos
    if kind in (b"$", b"="):
        n = int(head)
        if n < 0:
            return None, pos
        return buf[pos:pos + n], pos + n + 2
    if kind in (b"*", b"~", b"%"):
        n = int(head) * (2 if kind == b"%" else 1)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            item, pos = _parse(buf, pos)
            items.append(item)
        return items, pos
    raise AssertionError(f"unexpected reply {buf[pos - 1:pos + 40]!r}")


def parse(reply: bytes):
    value, end = _parse(reply)
    assert end == len(reply), reply
    return value


def read_aof_commands(directory: str) -> list[list[bytes]]:
    """Every command of the newest incremental AOF file under ``directory``."""
    files = sorted(glob.glob(os.path.join(directory, "appendonlydir", "*.incr.aof")))
    assert files, "no AOF written"
    with open(files[-1], "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos < len(data):
        assert data[pos:pos + 1] == b"*", data[pos:pos + 40]
        nl = data.index(b"\r\n", pos)
        argc, pos = int(data[pos + 1:nl]), nl + 2
        argv = []
        for _ in range(argc):
            nl = data.index(b"\r\n", pos)
            size, pos = int(data[pos + 1:nl]), nl + 2
            argv.append(data[pos:pos + size])
            pos += size + 2
        out.append(argv)
    return out
