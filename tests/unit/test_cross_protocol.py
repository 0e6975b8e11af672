"""Cross protocol scripting: a client that sends ``POST`` or ``Host:`` (an
HTTP request a browser was tricked into sending) is closed before anything
else of its read runs, and the warning is logged at most once a minute, as
Redis's securityWarningCommand does.  Engine and connection, no sockets."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.support.engine_harness import Harness
from tests.support.fake_transport import connect
from tidelog.config import Config
from tidelog.engine import ABORTED, CROSS_PROTOCOL_WARNING, Engine
from tidelog.resp.replies import ErrorReply
from tidelog.server.net import Server


def warnings(caplog: pytest.LogCaptureFixture) -> int:
    return sum(record.getMessage() == CROSS_PROTOCOL_WARNING for record in caplog.records)


@pytest.mark.parametrize("argv", [
    [b"POST", b"/", b"HTTP/1.1"], [b"post"], [b"Host:", b"127.0.0.1:6379"], [b"HOST:"],
    [b"hOsT:", b"a", b"b"],
])
def test_post_and_host_abort(argv: list[bytes]) -> None:
    h = Harness()
    assert h.engine.execute(h.client, argv) is ABORTED


@pytest.mark.parametrize("name", [b"poster", b"host", b"Host:x", b"GET"])
def test_other_names_are_not_attacks(name: bytes) -> None:
    h = Harness()
    assert isinstance(h.engine.execute(h.client, [name]), ErrorReply)


def test_inside_multi_and_subscribed_too() -> None:
    h = Harness()
    h.ok("MULTI")
    assert h.engine.execute(h.client, [b"POST", b"/"]) is ABORTED
    sub = h.new_client()
    h.ok("SUBSCRIBE", "c", client=sub)
    assert h.engine.execute(sub, [b"Host:", b"x"]) is ABORTED


def test_before_authentication() -> None:
    config = Config()
    config.set("requirepass", "secret")
    engine = Engine(config)
    client = engine.new_client()
    assert isinstance(engine.execute(client, [b"PING"]), ErrorReply)  # -NOAUTH
    assert engine.execute(client, [b"POST", b"/"]) is ABORTED


def test_the_servers_own_clients_get_the_unknown_command_error() -> None:
    """The AOF loader and a replica's link to its primary are no browsers."""
    h = Harness()
    for kind in ("aof", "master"):
        reply = h.engine.execute(h.engine.new_client(kind=kind), [b"POST", b"/"])
        assert isinstance(reply, ErrorReply)
        assert reply.message.startswith(b"ERR unknown command 'POST'")


def test_the_warning_is_logged_at_most_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    h = Harness()
    caplog.set_level(logging.WARNING, logger="tidelog")
    h.engine.execute(h.client, [b"POST"])
    assert warnings(caplog) == 1
    h.clock.advance(60_000)  # 60 s: not more than 60 yet
    h.engine.execute(h.client, [b"host:"])
    assert warnings(caplog) == 1
    h.clock.advance(1_001)
    h.engine.execute(h.client, [b"post"])
    assert warnings(caplog) == 2


async def test_the_connection_drops_the_read_and_closes() -> None:
    """``SET a 1`` before POST ran (as in Redis), its reply is not sent, and
    nothing after POST runs."""
    server = Server(Engine(Config()))
    conn, transport = connect(server)
    conn.data_received(b"SET a 1\r\nPING\r\nPOST / HTTP/1.1\r\nHost: x\r\n\r\nSET pwned 1\r\n")
    assert transport.writes == []
    assert transport.aborted and conn.closing
    db = server.engine.dbs[0]
    assert db.get(b"a") is not None and db.get(b"pwned") is None
    conn.data_received(b"SET late 1\r\n")  # anything arriving later is ignored
    assert db.get(b"late") is None and transport.writes == []


async def test_multibulk_post_after_a_blocked_command() -> None:
    """Commands pipelined behind a blocked one run later: POST among them
    still closes, and what follows it never runs."""
    server = Server(Engine(Config()))
    conn, transport = connect(server)
    conn.data_received(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n"
                       b"*1\r\n$4\r\nPOST\r\n*3\r\n$3\r\nSET\r\n$5\r\npwned\r\n$1\r\n1\r\n")
    assert not transport.aborted and conn.session.pending
    other, _ = connect(server)
    other.data_received(b"RPUSH q v\r\n")
    assert transport.writes == [b"*2\r\n$1\r\nq\r\n$1\r\nv\r\n"]  # BLPOP's reply
    await asyncio.sleep(0)  # the commands behind BLPOP run on the next turn
    assert transport.aborted
    assert server.engine.dbs[0].get(b"pwned") is None
