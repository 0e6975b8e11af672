"""A blocked client's connection when its command is answered: what it sent
behind the blocked command runs then (already parsed, or fed while it
waited), and with nothing behind it the connection only notes the moment."""

from __future__ import annotations

import asyncio

import tidelog.commands  # noqa: F401  (registers the commands)
from tests.support.fake_transport import cmd, connect
from tidelog.clock import FakeClock
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.server.net import Server

XREAD = cmd(b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$")
SERVED = b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


async def test_commands_fed_while_blocked_run_once_it_is_served() -> None:
    server = Server(Engine(Config()))
    reader, out = connect(server)
    writer, _ = connect(server)
    reader.data_received(XREAD)
    reader.data_received(cmd(b"XLEN", b"s"))  # arrives while it waits
    assert out.writes == []
    writer.data_received(cmd(b"XADD", b"s", b"1-1", b"f", b"v"))
    assert out.writes == [SERVED]
    await asyncio.sleep(0)  # the loop turn that runs what it sent
    assert out.writes == [SERVED, b":1\r\n"]


async def test_nothing_behind_it_only_the_interaction_is_noted() -> None:
    clock = FakeClock()
    server = Server(Engine(Config(), clock=clock))
    reader, out = connect(server)
    writer, _ = connect(server)
    reader.data_received(XREAD)
    clock.advance(5000)
    writer.data_received(cmd(b"XADD", b"s", b"1-1", b"f", b"v"))
    assert out.writes == [SERVED]
    assert reader.client.last_interaction == clock.monotonic()  # CLIENT LIST's idle: 0
    await asyncio.sleep(0)
    assert out.writes == [SERVED]
