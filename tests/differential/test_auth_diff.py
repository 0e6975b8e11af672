"""AUTH with requirepass (the default user's password), compared byte for
byte with redis-server 7.0.15 on fresh connections: -NOAUTH before
authenticating, which commands run anyway, -WRONGPASS, HELLO ... AUTH, the
one-argument and two-argument forms, RESET taking the authentication away,
and INFO's count of refused attempts."""

from __future__ import annotations

import pytest

from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential

PASSWORD = "s3cret pass"


@pytest.fixture
def locked(differ, tidelog, oracle_server):
    """Both servers with requirepass set; it is removed again afterwards."""
    ports = (tidelog.port, oracle_server.port)
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "requirepass", PASSWORD) == b"+OK\r\n"
    pairs = []

    def connect() -> tuple[RawClient, RawClient]:
        pairs.append((RawClient(ports[0]), RawClient(ports[1])))
        return pairs[-1]

    try:
        yield connect
    finally:
        for ours, theirs in pairs:
            ours.close()
            theirs.close()
        for client in (differ.ours, differ.theirs):  # authenticated when they connected
            assert client.call("CONFIG", "SET", "requirepass", "") == b"+OK\r\n"


def same(pair, *argv) -> bytes:
    ours, theirs = pair[0].call(*argv), pair[1].call(*argv)
    assert ours == theirs, f"{argv}: tidelog {ours!r}, redis {theirs!r}"
    return ours


def test_nothing_runs_before_auth_but_auth_hello_quit(locked) -> None:
    pair = locked()
    for argv in (["PING"], ["GET", "k"], ["XADD", "s", "*", "f", "v"], ["CONFIG", "GET", "port"],
                 ["CLIENT", "ID"], ["MULTI"], ["EXEC"], ["SELECT", "1"], ["NOSUCH"],
                 ["HELLO", "3"], ["HELLO", "2", "SETNAME", "x"], ["HELLO"]):
        same(pair, *argv)
    assert same(pair, "AUTH", "wrong") == b"-WRONGPASS invalid username-password pair or " \
        b"user is disabled.\r\n"
    same(pair, "AUTH", "default", "wrong")
    same(pair, "AUTH", "nobody", PASSWORD)
    same(pair, "AUTH", "a", "b", "c")
    assert same(pair, "AUTH", PASSWORD) == b"+OK\r\n"
    same(pair, "PING")
    same(pair, "RESET")
    same(pair, "PING")                      # RESET took the authentication away
    assert same(pair, "AUTH", "default", PASSWORD) == b"+OK\r\n"
    same(pair, "SET", "k", "v")


def test_hello_with_auth(locked) -> None:
    pair = locked()
    same(pair, "HELLO", "2", "AUTH", "default", "wrong")
    reply = pair[0].call("HELLO", "2", "AUTH", "default", PASSWORD)
    assert reply.startswith(b"*14\r\n") and b"redis" in reply
    assert pair[1].call("HELLO", "2", "AUTH", "default", PASSWORD).startswith(b"*14\r\n")
    same(pair, "PING")


def test_multi_before_auth_is_aborted(locked) -> None:
    pair = locked()
    same(pair, "MULTI")
    same(pair, "AUTH", PASSWORD)
    same(pair, "MULTI")
    same(pair, "PING")
    same(pair, "EXEC")


def test_refused_attempts_are_counted(locked, differ) -> None:
    """INFO stats' acl_access_denied_auth (Redis 7.2+, "Number of authentication
    failures": https://redis.io/docs/latest/commands/info/); 7.0.15 has no such field."""
    def denied() -> int:
        info = differ.ours.call("INFO", "stats").decode()
        return int(info.split("acl_access_denied_auth:")[1].split("\r\n")[0])

    assert b"acl_access_denied" not in differ.theirs.call("INFO", "stats")
    before = denied()
    pair = locked()
    same(pair, "AUTH", "nope")
    same(pair, "HELLO", "3", "AUTH", "default", "nope")
    same(pair, "AUTH", PASSWORD)
    assert denied() - before == 2


def test_auth_without_a_password(differ) -> None:
    differ.check("AUTH", "anything")
    differ.check("AUTH", "default", "anything")
    differ.check("AUTH", "someone", "anything")
