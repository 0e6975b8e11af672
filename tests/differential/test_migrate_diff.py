"""MIGRATE against redis-server 7.0.15: both servers move keys into one
third server (a redis-server), and their replies, the keys left behind and
what arrived are compared.  Also its key finder (COMMAND GETKEYS) and
COMMAND INFO, which redis-py's key parser reads.

https://redis.io/docs/latest/commands/migrate/
"""

from __future__ import annotations

import socket

import pytest
import redis

pytestmark = pytest.mark.differential


@pytest.fixture
def target(processes):
    srv = processes.redis("--save", "")
    client = redis.Redis(port=srv.port)
    yield srv.port, client
    client.close()


def both(differ, *argv) -> None:
    for client in (differ.ours, differ.theirs):
        client.call(*argv)


def test_migrate_replies_and_what_moves(differ, target):
    port, dest = target
    both(differ, "MSET", "a", "1", "b", "2", "c", "3", "keep", "4")
    both(differ, "HSET", "h", "f", "v")
    both(differ, "SET", "t", "x", "PX", "500000")
    # The first server moves into db 1, the second into db 2, same replies.
    for db, client in ((1, differ.ours), (2, differ.theirs)):
        reply = client.call("MIGRATE", "127.0.0.1", port, "a", db, 5000)
        assert reply == b"+OK\r\n"
        reply = client.call("MIGRATE", "127.0.0.1", port, "", db, 5000, "KEYS", "h", "t",
                            "nokey")
        assert reply == b"+OK\r\n"
        assert client.call("MIGRATE", "127.0.0.1", port, "keep", db, 5000, "COPY") == b"+OK\r\n"
    differ.check("EXISTS", "a", "h", "t", "keep")
    for db in (1, 2):
        dest.execute_command("SELECT", db)
        assert dest.get("a") == b"1"
        assert dest.hgetall("h") == {b"f": b"v"}
        assert 400000 < dest.pttl("t") <= 500000
        assert dest.get("keep") == b"4"
    dest.execute_command("SELECT", 0)


def each(differ, dest, prepare, *argv) -> bytes:
    """Run argv on each server against a target prepared afresh by
    ``prepare(dest)``; the replies must be the same (returned)."""
    replies = []
    for client in (differ.ours, differ.theirs):
        dest.flushall()
        prepare(dest)
        replies.append(client.call(*argv))
    assert replies[0] == replies[1], (argv, replies)
    return replies[0]


def test_migrate_errors_from_the_target(differ, target):
    port, dest = target

    def busy(d):
        d.set("b", "old")

    both(differ, "MSET", "a", "1", "b", "2")
    # b exists there: BUSYKEY for it, a moves, b stays.
    reply = each(differ, dest, busy, "MIGRATE", "127.0.0.1", port, "", 0, 5000,
                 "KEYS", "b", "a")
    assert reply == b"-ERR Target instance replied with error: BUSYKEY Target key name " \
                    b"already exists.\r\n"
    differ.check("EXISTS", "a", "b")
    both(differ, "SET", "a", "1")
    # AUTH refused by the target: an error for every key, nothing deleted here.
    each(differ, dest, lambda d: None, "MIGRATE", "127.0.0.1", port, "a", 0, 5000,
         "AUTH", "pw")
    differ.check("EXISTS", "a")
    each(differ, dest, lambda d: None, "MIGRATE", "127.0.0.1", port, "a", 99999, 5000,
         "REPLACE")
    differ.check("EXISTS", "a")
    reply = each(differ, dest, busy, "MIGRATE", "127.0.0.1", port, "b", 0, 5000, "REPLACE")
    assert reply == b"+OK\r\n"
    differ.check("EXISTS", "b")
    assert dest.get("b") == b"2"


@pytest.mark.parametrize("argv", [
    ["127.0.0.1", "PORT", "nokey", 0, 100],
    ["127.0.0.1", "PORT", "", 0, 100, "KEYS", "n1", "n2"],
    ["127.0.0.1", "PORT", "", 0, 100, "KEYS"],
    ["127.0.0.1", "PORT", "a", 0, 100, "KEYS", "b"],
    ["127.0.0.1", "PORT", "a", 0, 100, "COPY", "KEYS"],
    ["127.0.0.1", "PORT", "a", 0, "abc"],
    ["127.0.0.1", "PORT", "a", "x", 100],
    ["127.0.0.1", "PORT", "a", 0, 100, "FOO"],
    ["127.0.0.1", "PORT", "a", 0, 100, "AUTH"],
    ["127.0.0.1", "PORT", "a", 0, 100, "AUTH2", "user"],
    ["127.0.0.1", "1", "a", 0, 100],
    ["127.0.0.1", "abc", "a", 0, 100],
    ["nonexistent.invalid", "1", "a", 0, 100],
    ["", "PORT", "a", 0, 100, "COPY"],
    ["127.0.0.1", "-5", "a", 0, 100],
    ["127.0.0.1", "70000", "a", 0, 100],
])
def test_migrate_refusals(differ, target, argv):
    port, _ = target
    both(differ, "SET", "a", "1")
    differ.check("MIGRATE", *[port if a == "PORT" else a for a in argv])
    differ.check("EXISTS", "a")


@pytest.mark.parametrize("argv", [
    ["h", 1, "k", 0, 5000],
    ["h", 1, "", 0, 5000],
    ["h", 1, "", 0, 5000, "KEYS", "k1", "k2"],
    ["h", 1, "", 0, 5000, "AUTH", "KEYS", "KEYS", "k1"],
    ["h", 1, "", 0, 5000, "AUTH2", "KEYS", "x", "KEYS", "k1"],
    ["h", 1, "k", 0, 5000, "KEYS", "k1"],
    ["h", 1, "", 0, 5000, "COPY", "REPLACE", "KEYS"],
])
def test_migrate_getkeys(differ, argv):
    differ.check("COMMAND", "GETKEYS", "MIGRATE", *argv)
    differ.check("COMMAND", "GETKEYSANDFLAGS", "MIGRATE", *argv)


def test_migrate_command_info(differ):
    differ.check("COMMAND", "INFO", "MIGRATE")


def test_migrate_target_that_never_answers(differ):
    """A target that takes the connection and says nothing: the reply lines
    time out (the key stays)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        both(differ, "SET", "a", "1")
        reply = differ.check("MIGRATE", "127.0.0.1", silent.getsockname()[1], "a", 0, 200)
        assert reply == b"-IOERR error or timeout reading to target instance\r\n"
        differ.check("EXISTS", "a")
