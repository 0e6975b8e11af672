"""Helpers of the differential tests: a second connection to each server
(``Pair``), waiting until both servers block ``n`` clients, a small RESP
reader for replies whose element order is unspecified, redis-server's
AOF read back as commands, the effects Tidelog records
(``captured_effects``, ``assert_effects_match_aof``), and our XINFO STREAM replies without Redis 8.6's
IDMP fields (``without_idmp_fields``)."""

from __future__ import annotations

import glob
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.rawclient import RawClient, encode_command
from tidelog.commands.effects import argv_of


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


@contextmanager
def captured_effects(tidelog) -> Iterator[list[list[bytes]]]:
    """Collect the effect argvs Tidelog records while the block runs.

    Read the list through ``tidelog.call(lambda: list(captured))``: it is
    filled on the server's thread."""
    captured: list[list[bytes]] = []

    def listen(effects):
        captured.extend(argv_of(effect) for _, effect in effects)

    tidelog.call(lambda: tidelog.engine.effect_listeners.append(listen))
    try:
        yield captured
    finally:
        tidelog.call(lambda: listen in tidelog.engine.effect_listeners
                     and tidelog.engine.effect_listeners.remove(listen))


def assert_effects_match_aof(tidelog, aof_oracle, script) -> None:
    """Run ``script`` (argvs) on both servers, flushed first, each reply the
    same on both, and check that what Tidelog propagated is what redis-server
    appended to its AOF (SELECTs left out)."""
    theirs = RawClient(aof_oracle.port)
    ours = RawClient(tidelog.port)
    try:
        for client in (ours, theirs):
            assert client.call("FLUSHALL") == b"+OK\r\n"
        before = len(read_aof_commands(aof_oracle.dir))
        with captured_effects(tidelog) as captured:
            for argv in script:
                assert ours.call(*argv) == theirs.call(*argv), argv
            written = [argv for argv in read_aof_commands(aof_oracle.dir)[before:]
                       if argv[0].upper() != b"SELECT"]
            got = tidelog.call(lambda: list(captured))
        assert got == written
    finally:
        ours.close()
        theirs.close()


# An XINFO STREAM map up to recorded-first-entry-id (RESP2 array or RESP3
# map): its size, "length", then the 18 lines of the six fields after it.
_STREAM_HEAD = (rb"([*%])(\d+)(\r\n\$6\r\nlength\r\n(?:[^\r\n]*\r\n){18}"
                rb"\$23\r\nrecorded-first-entry-id\r\n\$\d+\r\n\d+-\d+\r\n)")
_IDMP_FIELDS = (b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
                b"iids-added", b"iids-duplicates")
_IDMP_BLOCK = b"".join(rb"\$%d\r\n%s\r\n:\d+\r\n" % (len(name), re.escape(name))
                       for name in _IDMP_FIELDS)
_STREAM_HEAD_RE = re.compile(_STREAM_HEAD)
_STREAM_HEAD_IDMP_RE = re.compile(_STREAM_HEAD + _IDMP_BLOCK)


def without_idmp_fields(ours: bytes, theirs: bytes) -> bytes:
    """Our reply without XINFO STREAM's Redis 8.6 IDMP fields, after asserting
    that each of our stream maps has them and redis-server 7.0's reply has none."""
    heads = len(_STREAM_HEAD_RE.findall(ours))
    if not heads:
        return ours

    def drop(m: re.Match[bytes]) -> bytes:
        size = int(m[2]) - (len(_IDMP_FIELDS) * 2 if m[1] == b"*" else len(_IDMP_FIELDS))
        return m[1] + b"%d" % size + m[3]

    stripped, found = _STREAM_HEAD_IDMP_RE.subn(drop, ours)
    assert found == heads, f"an XINFO STREAM reply without the IDMP fields: {ours!r}"
    assert b"idmp-duration" not in theirs, f"redis-server shows IDMP fields: {theirs!r}"
    return stripped


@contextmanager
def small_bulk_limit(differ):
    """proto-max-bulk-len at its 1 MB minimum on both servers, restored after."""
    differ.check("CONFIG", "SET", "proto-max-bulk-len", "1mb")
    try:
        yield
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")
