"""The connection's outbox: Pub/Sub messages reach a subscriber in one write
per loop turn, and never after a reply the server sent later."""

from __future__ import annotations

import asyncio

import tidelog.commands  # noqa: F401  (registers the commands)
from tests.support.fake_transport import Transport, cmd, connect
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.server.connection import Connection
from tidelog.server.net import Server


def message(channel: bytes, text: bytes) -> bytes:
    return (b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
            % (len(channel), channel, len(text), text))




async def pair() -> tuple[Transport, Connection, Connection, Transport]:
    server = Server(Engine(Config()))
    subscriber, sub_out = connect(server)
    publisher, pub_out = connect(server)
    subscriber.data_received(cmd(b"SUBSCRIBE", b"ch"))
    sub_out.writes.clear()
    return sub_out, subscriber, publisher, pub_out


async def test_a_burst_of_messages_goes_out_in_one_write() -> None:
    sub_out, _, publisher, pub_out = await pair()
    publisher.data_received(cmd(b"PUBLISH", b"ch", b"m1") + cmd(b"PUBLISH", b"ch", b"m2"))
    assert pub_out.writes == [b":1\r\n:1\r\n"]
    assert sub_out.writes == []  # held until the end of this loop turn
    await asyncio.sleep(0)
    assert sub_out.writes == [message(b"ch", b"m1") + message(b"ch", b"m2")]


async def test_held_messages_go_before_a_later_reply() -> None:
    sub_out, subscriber, publisher, _ = await pair()
    publisher.data_received(cmd(b"PUBLISH", b"ch", b"m1"))
    subscriber.data_received(cmd(b"PING"))
    pong = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"  # PING in RESP2 subscribed mode
    assert sub_out.writes == [message(b"ch", b"m1") + pong]
    await asyncio.sleep(0)  # the turn's flush finds nothing left
    assert sub_out.writes == [message(b"ch", b"m1") + pong]


async def test_each_protocol_gets_its_own_encoding() -> None:
    server = Server(Engine(Config()))
    resp2, out2 = connect(server)
    resp3, out3 = connect(server)
    resp3.data_received(cmd(b"HELLO", b"3"))
    for conn in (resp2, resp3):
        conn.data_received(cmd(b"SUBSCRIBE", b"ch"))
    out2.writes.clear()
    out3.writes.clear()
    publisher, _ = connect(server)
    publisher.data_received(cmd(b"PUBLISH", b"ch", b"hi"))
    await asyncio.sleep(0)
    assert out2.writes == [message(b"ch", b"hi")]
    assert out3.writes == [b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"]
