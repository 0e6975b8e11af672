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
them (and their count in the map's size) from ours before comparing
(:func:`tests.support.differ_tools.without_idmp_fields`).
"""

from __future__ import annotations

import re

import pytest

from tests.support.differ_tools import without_idmp_fields
from tests.support.processes import RedisServer
from tests.support.rawclient import RawClient
from tests.support.redis_oracle import REDIS_SERVER

pytestmark = pytest.mark.differential


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

    def check_newer(self, *argv: bytes | str | int, ours: bytes) -> bytes:
        """A reply newer Redis changed on purpose (the caller cites where):
        ours must be exactly ``ours``, and 7.0.15's must differ from it, so the
        test keeps saying where the two versions part.  Returns 7.0's."""
        raw = self.ours.call(*argv)
        theirs = self.theirs.call(*argv)
        assert raw == ours, f"\ncommand: {argv!r}\ntidelog: {raw!r}\nwanted:  {ours!r}"
        assert theirs != ours, f"\ncommand: {argv!r}: 7.0.15 now answers the same"
        return theirs

    def check_all(self, commands: list[list[bytes | str | int]]) -> None:
        for argv in commands:
            self.check(*argv)

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


@pytest.fixture
def differ(tidelog, oracle_server):
    d = Differ(tidelog.port, oracle_server.port)
    d.reset()
    yield d
    d.close()


@pytest.fixture(scope="module")
def aof_oracle():
    """A redis-server of the module's own with ``appendonly yes`` and
    ``appendfsync always``, whose AOF is read back to compare what each
    command propagates (:func:`tests.support.differ_tools.assert_effects_match_aof`)."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    srv = RedisServer("--appendonly", "yes", "--appendfsync", "always")
    yield srv
    srv.stop()
