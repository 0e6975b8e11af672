"""Pub/Sub from redis-py, unchanged: the sync ``PubSub`` (get_message,
listen, a handler thread), the asyncio one, RESP2 and RESP3, with and without
hiredis doing the parsing.  Reads wait on the socket (``timeout``), never on
sleeps."""

from __future__ import annotations

import asyncio
import threading

import pytest
import redis
import redis.asyncio
from redis._parsers import _RESP2Parser, _RESP3Parser

TIMEOUT = 5.0


def next_message(pubsub, timeout: float = TIMEOUT):
    """The next message (subscription confirmations included)."""
    message = pubsub.get_message(timeout=timeout)
    assert message is not None, "no message came"
    return message


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("parser", ["default", "python"])
def test_sync_pubsub(tidelog, protocol, parser):
    python_parser = _RESP2Parser if protocol == 2 else _RESP3Parser
    kwargs = {"parser_class": python_parser} if parser == "python" else {}
    r = redis.Redis(connection_pool=redis.ConnectionPool(port=tidelog.port, protocol=protocol,
                                                         **kwargs))
    p = r.pubsub()
    try:
        p.subscribe("news", "sport")
        assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": b"news", "data": 1}
        assert next_message(p)["data"] == 2
        p.psubscribe("n*")
        assert next_message(p) == {"type": "psubscribe", "pattern": None, "channel": b"n*", "data": 3}
        assert r.publish("news", "hello") == 2
        assert next_message(p) == {"type": "message", "pattern": None, "channel": b"news",
                                   "data": b"hello"}
        assert next_message(p) == {"type": "pmessage", "pattern": b"n*", "channel": b"news",
                                   "data": b"hello"}
        assert r.pubsub_numsub("news", "none") == [(b"news", 1), (b"none", 0)]
        assert r.pubsub_numpat() == 1
        assert sorted(r.pubsub_channels()) == [b"news", b"sport"]
        p.ping()
        assert next_message(p) == {"type": "pong", "pattern": None, "channel": None, "data": b""}
        p.unsubscribe("news")
        assert next_message(p)["type"] == "unsubscribe"
        p.punsubscribe()
        assert next_message(p) == {"type": "punsubscribe", "pattern": None, "channel": b"n*",
                                   "data": 1}
        assert r.publish("news", "x") == 0
        assert r.publish("sport", "goal") == 1
        assert next_message(p)["data"] == b"goal"
    finally:
        p.close()
        r.close()


def test_sync_listen_and_handlers(tidelog):
    r = redis.Redis(port=tidelog.port)
    p = r.pubsub(ignore_subscribe_messages=True)
    got: list[bytes] = []
    done = threading.Event()

    def handler(message):
        got.append(message["data"])
        if message["data"] == b"stop":
            done.set()

    p.subscribe(**{"events": handler})
    thread = p.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        # Publish until the subscription is in place (it is made by the thread).
        while r.pubsub_numsub("events")[0][1] == 0:
            assert thread.is_alive()
            done.wait(0.01)
        for word in ("a", "b", "stop"):
            assert r.publish("events", word) == 1
        assert done.wait(TIMEOUT)
        assert got == [b"a", b"b", b"stop"]
    finally:
        thread.stop()
        thread.join(TIMEOUT)
        p.close()

    # listen(): a generator over every message.
    p = r.pubsub()
    p.subscribe("feed")
    listening = p.listen()
    assert next(listening)["type"] == "subscribe"
    r.publish("feed", "one")
    assert next(listening)["data"] == b"one"
    p.close()
    r.close()


def test_sharded_pubsub(tidelog):
    r = redis.Redis(port=tidelog.port)
    p = r.pubsub()
    try:
        p.ssubscribe("shard")
        assert next_message(p) == {"type": "ssubscribe", "pattern": None, "channel": b"shard",
                                   "data": 1}
        assert r.spublish("shard", "m") == 1
        assert r.publish("shard", "m") == 0
        assert next_message(p)["type"] == "smessage"
        assert r.pubsub_shardchannels() == [b"shard"]
        assert r.pubsub_shardnumsub("shard") == [(b"shard", 1)]
    finally:
        p.close()
        r.close()


def test_subscribed_mode_refuses_other_commands(tidelog):
    r = redis.Redis(port=tidelog.port, protocol=2)  # RESP3 has no subscribed mode
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("SUBSCRIBE", "x")
        assert conn.read_response() == [b"subscribe", b"x", 1]
        conn.send_command("GET", "k")
        with pytest.raises(redis.ResponseError, match="only \\(P\\|S\\)SUBSCRIBE"):
            conn.read_response()
        conn.send_command("RESET")
        assert conn.read_response() == b"RESET"
        conn.send_command("GET", "k")
        assert conn.read_response() is None
    finally:
        r.connection_pool.release(conn)
        r.close()


@pytest.mark.parametrize("protocol", [2, 3])
async def test_asyncio_pubsub(tidelog, protocol):
    r = redis.asyncio.Redis(port=tidelog.port, protocol=protocol)
    p = r.pubsub()
    try:
        await p.subscribe("a-chan")
        await p.psubscribe("a-*")
        message = await p.get_message(timeout=TIMEOUT)
        assert message["type"] == "subscribe"
        message = await p.get_message(timeout=TIMEOUT)
        assert message["type"] == "psubscribe"
        assert await r.publish("a-chan", "hi") == 2
        kinds = []
        async for message in p.listen():
            kinds.append((message["type"], message["data"]))
            if len(kinds) == 2:
                break
        assert kinds == [("message", b"hi"), ("pmessage", b"hi")]
        await p.unsubscribe()
        await p.punsubscribe()
        left = [await p.get_message(timeout=TIMEOUT) for _ in range(2)]
        assert {m["type"] for m in left} == {"unsubscribe", "punsubscribe"}
        assert await r.publish("a-chan", "x") == 0
    finally:
        await p.aclose()
        await r.aclose()


async def test_asyncio_many_subscribers(tidelog):
    r = redis.asyncio.Redis(port=tidelog.port)
    subscribers = [r.pubsub(ignore_subscribe_messages=True) for _ in range(5)]
    try:
        for p in subscribers:
            await p.subscribe("fan")
        assert (await r.pubsub_numsub("fan")) == [(b"fan", 5)]
        assert await r.publish("fan", "out") == 5

        async def first(p):
            while True:
                message = await p.get_message(timeout=TIMEOUT)
                if message is not None:
                    return message["data"]

        got = await asyncio.wait_for(asyncio.gather(*(first(p) for p in subscribers)), TIMEOUT)
        assert got == [b"out"] * 5
    finally:
        for p in subscribers:
            await p.aclose()
        await r.aclose()
