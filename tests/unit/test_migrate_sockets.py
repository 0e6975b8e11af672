"""MIGRATE's connection cache without a network: each "connection" is one
end of a socketpair, so what the cache keeps, reuses, evicts and closes is
seen on the other end.  Facts from https://redis.io/docs/latest/commands/migrate/
(connections are cached) and Redis's limits: 64 connections, 10 idle seconds.
"""

from __future__ import annotations

import random
import socket

import pytest

from tidelog.commands.keys.migrate_sockets import CACHE_ITEMS, CACHE_TTL_S, MigrateSockets
from tidelog.config import Config
from tidelog.errors import CommandError


class Pairs:
    """A ``connect`` for the cache: the near end of a new socketpair; the far
    ends are kept, by address, to look at."""

    def __init__(self) -> None:
        self.far: list[tuple[tuple[str, int], socket.socket]] = []
        self.near: list[socket.socket] = []

    def __call__(self, address: tuple[str, int], timeout: float) -> socket.socket:
        near, far = socket.socketpair()
        near.settimeout(timeout)
        self.near.append(near)
        self.far.append((address, far))
        return near

    def close(self) -> None:
        for sock in self.near + [far for _, far in self.far]:
            sock.close()


@pytest.fixture
def pairs():
    made = Pairs()
    yield made
    made.close()


def closed(far: socket.socket) -> bool:
    far.settimeout(1)
    return far.recv(1) == b""


def test_a_cached_connection_is_reused(pairs):
    cache = MigrateSockets(connect=pairs)
    first = cache.get(b"127.0.0.1", b"7000", 1.0, 0.0, Config())
    assert cache.get(b"127.0.0.1", b"7000", 1.0, 5.0, Config()) is first
    assert first.last_use == 5.0 and cache.opened == 1 and len(cache) == 1
    # the address as spelled, and the port as atoi reads it
    other = cache.get(b"localhost", b"7000abc", 1.0, 5.0, Config())
    assert other is not first and pairs.far[1][0] == ("localhost", 7000)


def test_reply_lines_arrive_in_pieces_and_a_close_is_an_error(pairs):
    cache = MigrateSockets(connect=pairs)
    target = cache.get(b"h", b"1", 1.0, 0.0, Config())
    target.send(b"*1\r\n$4\r\nPING\r\n", 1.0)
    far = pairs.far[0][1]
    assert far.recv(100) == b"*1\r\n$4\r\nPING\r\n"
    far.sendall(b"+O")
    far.sendall(b"K\r\n-ERR x\r\n+")
    assert target.read_line() == b"+OK"
    assert target.read_line() == b"-ERR x"
    far.close()
    with pytest.raises(OSError):
        target.read_line()


def test_a_silent_target_times_out(pairs):
    cache = MigrateSockets(connect=pairs)
    target = cache.get(b"h", b"1", 0.05, 0.0, Config())
    target.send(b"x", 0.05)
    with pytest.raises(TimeoutError):
        target.read_line()


def test_the_cron_closes_what_was_idle_too_long(pairs):
    cache = MigrateSockets(connect=pairs)
    cache.get(b"h", b"1", 1.0, 0.0, Config())
    cache.get(b"h", b"2", 1.0, 5.0, Config())
    assert cache.close_idle(CACHE_TTL_S) == 0  # exactly the TTL: kept, as Redis's ">"
    assert cache.close_idle(CACHE_TTL_S + 1) == 1
    assert list(cache.targets) == [(b"h", b"2")]
    assert closed(pairs.far[0][1])
    cache.close_all()
    assert len(cache) == 0 and closed(pairs.far[1][1])


def test_at_most_64_are_kept(pairs):
    cache = MigrateSockets(connect=pairs, rng=random.Random(7))
    for port in range(CACHE_ITEMS + 1):
        cache.get(b"h", b"%d" % port, 1.0, 0.0, Config())
    assert len(cache) == CACHE_ITEMS
    assert (b"h", b"%d" % CACHE_ITEMS) in cache.targets  # the new one stays
    gone = [far for (address, far) in pairs.far
            if (b"h", b"%d" % address[1]) not in cache.targets]
    assert len(gone) == 1 and closed(gone[0])


@pytest.mark.parametrize("host, port", [(b"", b"6379"), (b"h", b"-1")])
def test_no_address_is_a_connect_error(pairs, host, port):
    cache = MigrateSockets(connect=pairs)
    with pytest.raises(CommandError) as info:
        cache.get(host, port, 1.0, 0.0, Config())
    assert b"IOERR error or timeout connecting" in bytes(info.value.args[0])
    assert len(cache) == 0 and not pairs.far


def test_closing_forgets(pairs):
    cache = MigrateSockets(connect=pairs)
    cache.get(b"h", b"1", 1.0, 0.0, Config())
    cache.close(b"h", b"1")
    cache.close(b"h", b"1")  # twice: nothing more to do
    assert len(cache) == 0 and closed(pairs.far[0][1])
    cache.get(b"h", b"1", 1.0, 0.0, Config())
    assert cache.opened == 2
