"""A replica's link stops when its task is cancelled, whatever the link was
doing at that moment.  On Python 3.11, ``asyncio.wait_for`` answers a
cancellation that comes while the awaited connect or read is ending (the
primary closing the connection as both servers shut down) with that ending
instead of CancelledError; the link then used to reconnect once a second
for ever.  The cancellation is tried at every loop turn of the first
attempts, against a primary that hangs up at once and a port nobody
listens on."""

from __future__ import annotations

import asyncio

import pytest

import tidelog.commands  # noqa: F401  (registers the commands)
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.replication.primary import attach, stop_following

TURNS = 12  # the attempts end within this many loop turns (more than enough)
ENDS_WITHIN = 2.0  # seconds; a link that lost its cancel sleeps 1 s and reconnects


async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.close()


@pytest.fixture
async def closing_primary():
    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def follow(port: int):
    engine = Engine(Config())
    primary = attach(engine)
    primary.become_replica("127.0.0.1", port, "test")
    assert primary.upstream is not None
    return engine, primary.upstream


@pytest.mark.parametrize("where", ["hangs-up", "refused"])
async def test_a_cancel_at_any_turn_ends_the_link(where: str, closing_primary) -> None:
    port = closing_primary if where == "hangs-up" else 1  # nobody listens on port 1
    survived = []
    for turns in range(TURNS):
        _, upstream = await follow(port)
        task = upstream._task
        assert task is not None
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=ENDS_WITHIN)
        if not done:
            survived.append(turns)
            upstream.stop()
            await upstream.wait_stopped(ENDS_WITHIN)
    assert survived == []


async def test_stop_following_ends_the_link(closing_primary) -> None:
    for turns in range(TURNS):
        engine, upstream = await follow(closing_primary)
        for _ in range(turns):
            await asyncio.sleep(0)
        await stop_following(engine, timeout=ENDS_WITHIN)
        assert upstream._task is not None and upstream._task.done()
        assert upstream.state == "connect" and upstream.writer is None


async def test_stop_following_without_a_primary() -> None:
    engine = Engine(Config())
    await stop_following(engine)  # never a replica: nothing to stop
    attach(engine)
    await stop_following(engine)  # a primary, not following anybody
