"""Keyspace notifications through redis-py's PubSub, sync and asyncio, RESP2
and RESP3.  Reads wait on the socket (``timeout``), never on sleeps.

https://redis.io/docs/latest/develop/pubsub/keyspace-notifications/
"""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

TIMEOUT = 5.0


@pytest.fixture
def notifying(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.config_set("notify-keyspace-events", "KEA")
    yield tidelog
    r.config_set("notify-keyspace-events", "")
    r.close()


def messages(pubsub, count: int) -> list[dict]:
    got = []
    while len(got) < count:
        message = pubsub.get_message(timeout=TIMEOUT, ignore_subscribe_messages=True)
        assert message is not None, f"only {got!r} came"
        got.append(message)
    return got


@pytest.mark.parametrize("protocol", [2, 3])
def test_sync_pubsub_sees_a_producer_and_a_consumer(notifying, protocol):
    r = redis.Redis(port=notifying.port, protocol=protocol)
    p = r.pubsub()
    try:
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=TIMEOUT)["type"] == "psubscribe"
        r.xadd("orders", {"n": "1"}, id="1-1")
        r.xgroup_create("orders", "workers", id="0")
        r.xreadgroup("workers", "w1", {"orders": ">"})
        r.xadd("orders", {"n": "2"}, id="2-1", maxlen=1, approximate=False)
        r.delete("orders")
        got = [(m["channel"], m["data"]) for m in messages(p, 6)]
        assert got == [(b"__keyevent@0__:xadd", b"orders"),
                       (b"__keyevent@0__:xgroup-create", b"orders"),
                       (b"__keyevent@0__:xgroup-createconsumer", b"orders"),
                       (b"__keyevent@0__:xadd", b"orders"),
                       (b"__keyevent@0__:xtrim", b"orders"),
                       (b"__keyevent@0__:del", b"orders")]
        assert p.get_message(timeout=0.05) is None
    finally:
        p.close()
        r.close()


def test_asyncio_pubsub_keyspace_channel(notifying):
    async def main() -> list[tuple[bytes, bytes]]:
        r = redis.asyncio.Redis(port=notifying.port, protocol=3)
        p = r.pubsub()
        try:
            await p.subscribe("__keyspace@0__:k")
            assert (await p.get_message(timeout=TIMEOUT))["type"] == "subscribe"
            await r.set("k", "v", px=100000)
            await r.persist("k")
            await r.incr("other")  # another key: not on this channel
            await r.append("k", "w")
            got = []
            while len(got) < 4:
                m = await p.get_message(timeout=TIMEOUT, ignore_subscribe_messages=True)
                assert m is not None, got
                got.append((m["channel"], m["data"]))
            return got
        finally:
            await p.aclose()
            await r.aclose()

    assert asyncio.run(main()) == [(b"__keyspace@0__:k", b"set"), (b"__keyspace@0__:k", b"expire"),
                                   (b"__keyspace@0__:k", b"persist"),
                                   (b"__keyspace@0__:k", b"append")]
