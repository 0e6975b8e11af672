"""Differential testing: the same commands to Tidelog and to redis-server,
raw reply bytes compared.

    def test_xlen(differ):
        differ.check("XADD", "s", "1-1", "f", "v")
        differ.check("XLEN", "s")

``check`` returns the reply bytes (identical on both) so a test can also
assert what they are.  Every test starts from empty servers with the same
stream node limits on both (``differ.reset(node_entries=..., node_bytes=...)``
changes them).

XINFO STREAM: Tidelog shows Redis 8.6's six IDMP fields after
``recorded-first-entry-id``; 7.0.15 has none.  ``check`` asserts that every
XINFO STREAM map of ours carries them and 7.0's reply does not, then drops
them (and their count in the map's size) from ours before comparing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential


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


class Differ:
    def __init__(self, tidelog_port: int, redis_port: int) -> None:
        self.ours = RawClient(tidelog_port)
        self.theirs = RawClient(redis_port)
        self.normalisers: list[tuple[re.Pattern[bytes], bytes]] = []

    def reset(self, node_entries: int = 100, node_bytes: int = 0) -> None:
        for client in (self.ours, self.theirs):
            client.call("HELLO", "2")
            client.call("SELECT", "0")
            assert client.call("FLUSHALL") == b"+OK\r\n"
            for name, value in (("stream-node-max-entries", node_entries),
                                ("stream-node-max-bytes", node_bytes)):
                assert client.call("CONFIG", "SET", name, value) == b"+OK\r\n"

    def resp3(self) -> None:
        """Switch both connections to RESP3 (the HELLO replies differ, by design)."""
        for client in (self.ours, self.theirs):
            assert client.call("HELLO", "3").startswith(b"%")

    def normalise(self, pattern: bytes, replacement: bytes) -> None:
        """Blank out a varying part (times) in both replies before comparing."""
        self.normalisers.append((re.compile(pattern), replacement))

    def _norm(self, reply: bytes) -> bytes:
        for pattern, replacement in self.normalisers:
            reply = pattern.sub(replacement, reply)
        return reply

    def check(self, *argv: bytes | str | int) -> bytes:
        raw = self.ours.call(*argv)
        theirs = self.theirs.call(*argv)
        ours = without_idmp_fields(raw, theirs)
        assert self._norm(ours) == self._norm(theirs), (
            f"\ncommand: {argv!r}\ntidelog: {raw!r}\nredis:   {theirs!r}")
        return ours

    def check_all(self, commands: list[list[bytes | str | int]]) -> None:
        for argv in commands:
            self.check(*argv)

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


@contextmanager
def captured_effects(tidelog) -> Iterator[list[list[bytes]]]:
    """Collect the effect argvs Tidelog records while the block runs.

    Read the list through ``tidelog.call(lambda: list(captured))``: it is
    filled on the server's thread."""
    captured: list[list[bytes]] = []

    def listen(effects):
        captured.extend(argv for _, argv in effects)

    tidelog.call(lambda: tidelog.engine.effect_listeners.append(listen))
    try:
        yield captured
    finally:
        tidelog.call(lambda: listen in tidelog.engine.effect_listeners
                     and tidelog.engine.effect_listeners.remove(listen))


@pytest.fixture
def differ(tidelog, oracle_server):
    d = Differ(tidelog.port, oracle_server.port)
    d.reset()
    yield d
    d.close()
