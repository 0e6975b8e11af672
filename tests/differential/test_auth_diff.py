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


@pytest.mark.parametrize("request_bytes", [
    b"*11\r\n" + b"$1\r\na\r\n" * 11,                      # 11 arguments
    b"*2\r\n$4\r\nECHO\r\n$16385\r\n" + b"x" * 16385 + b"\r\n",  # a 16 KiB + 1 argument
    b"*3\r\n$4\r\nAUTH\r\n$1\r\nx\r\n$20000\r\n",          # refused at its header
])
def test_unauthenticated_requests_are_limited(locked, request_bytes) -> None:
    """Before AUTH: at most 10 arguments of 16 KiB (Redis's fix of
    CVE-2021-32675, in 7.0.15 too); the error closes the connection."""
    pair = locked()
    for client in pair:
        client.send_raw(request_bytes)
    assert pair[0].read_reply() == pair[1].read_reply() in (
        b"-ERR Protocol error: unauthenticated multibulk length\r\n",
        b"-ERR Protocol error: unauthenticated bulk length\r\n")


def test_the_limits_go_with_auth(locked) -> None:
    """The command after AUTH, in the same write, is read with the limits
    of an authenticated client."""
    pair = locked()
    big = b"x" * 20000
    for client in pair:
        client.send_raw(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(PASSWORD), PASSWORD.encode()) +
                        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20000\r\n" + big + b"\r\n" +
                        b"*12\r\n" + b"$4\r\nECHO\r\n" + b"$1\r\na\r\n" * 11)
    for _ in range(3):
        assert pair[0].read_reply() == pair[1].read_reply()
    same(pair, "STRLEN", "k")
