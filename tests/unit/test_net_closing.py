"""The closing flag has one owner, the session (``Session.closing``); the
connection reads it (``Connection.closing``) and sets it when it closes.
Whichever side closes, both agree, and nothing more is read or run."""

from __future__ import annotations

import tidelog.commands  # noqa: F401  (registers the commands)
from tests.support.fake_transport import cmd, connect
from tidelog import errors
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.server.net import Server


def server(**options: str) -> Server:
    config = Config()
    for name, value in options.items():
        config.set(name, value)
    return Server(Engine(config))


async def test_a_refused_connection_is_closing_and_has_no_session() -> None:
    srv = server(maxclients="1")
    connect(srv)
    refused, out = connect(srv)
    assert out.writes == [b"-" + errors.MAX_CLIENTS_REACHED + b"\r\n"]
    assert refused.session is None and refused.closing
    refused.data_received(cmd(b"PING"))
    assert out.writes == [b"-" + errors.MAX_CLIENTS_REACHED + b"\r\n"]


async def test_close_sets_the_sessions_flag_and_nothing_more_runs() -> None:
    srv = server()
    conn, out = connect(srv)
    assert not conn.closing and not conn.session.closing
    conn.close()
    assert conn.closing and conn.session.closing
    conn.data_received(cmd(b"SET", b"k", b"v"))
    assert out.writes == []
    other, other_out = connect(srv)
    other.data_received(cmd(b"EXISTS", b"k"))
    assert other_out.writes == [b":0\r\n"]


async def test_quit_closes_from_the_session_side() -> None:
    conn, out = connect(server())
    conn.data_received(cmd(b"QUIT") + cmd(b"PING"))
    assert out.writes == [b"+OK\r\n"]
    assert conn.session.closing and conn.closing
    conn.data_received(cmd(b"PING"))
    assert out.writes == [b"+OK\r\n"]


async def test_client_kill_closes_the_other_connection() -> None:
    srv = server()
    killer, _ = connect(srv)
    victim, out = connect(srv)
    killer.data_received(cmd(b"CLIENT", b"KILL", b"ID", b"%d" % victim.client.id))
    assert victim.closing and victim.session.closing
    victim.data_received(cmd(b"PING"))
    assert out.writes == []
