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


# -- Redis 8.8's subkey channels ---------------------------------------------------------
# https://redis.io/docs/latest/develop/pubsub/subkeyspace-notifications/
@pytest.fixture
def subkey_notifying(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.config_set("notify-keyspace-events", "KEASTIV")
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKESTIV"}
    yield tidelog
    r.config_set("notify-keyspace-events", "")
    r.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_sync_subkey_channels_raw(subkey_notifying, protocol):
    r = redis.Redis(port=subkey_notifying.port, protocol=protocol)
    p = r.pubsub()
    try:
        p.psubscribe("__subkey*")
        assert p.get_message(timeout=TIMEOUT)["type"] == "psubscribe"
        r.hset("user:1", mapping={"name": "ann", "a,b": "x"})
        r.hdel("user:1", "name", "nofield")
        got = [(m["channel"], m["data"]) for m in messages(p, 8)]
        assert got == [
            (b"__subkeyspace@0__:user:1", b"hset|4:name,3:a,b"),
            (b"__subkeyevent@0__:hset", b"6:user:1|4:name,3:a,b"),
            (b"__subkeyspaceitem@0__:user:1\nname", b"hset"),
            (b"__subkeyspaceitem@0__:user:1\na,b", b"hset"),
            (b"__subkeyspaceevent@0__:hset|user:1", b"4:name,3:a,b"),
            (b"__subkeyspace@0__:user:1", b"hdel|4:name"),
            (b"__subkeyevent@0__:hdel", b"6:user:1|4:name"),
            (b"__subkeyspaceitem@0__:user:1\nname", b"hdel"),
        ]
    finally:
        p.close()
        r.close()


def test_sync_subkey_notifications_through_redis_py_helper(subkey_notifying):
    r = redis.Redis(port=subkey_notifying.port, decode_responses=True)
    notifications = r.keyspace_notifications()
    try:
        notifications.subscribe_subkeyspaceitem("h", "f2")
        notifications.subscribe_subkeyevent("hincrby")
        r.hset("h", mapping={"f1": "1", "f2": "2"})
        r.hincrby("h", "f1", 5)
        got = []
        while len(got) < 2:
            msg = notifications.get_message(timeout=TIMEOUT)
            if msg is not None:
                got.append((msg.key, msg.event_type, msg.subkeys))
        assert got == [("h", "hset", ["f2"]), ("h", "hincrby", ["f1"])]
    finally:
        notifications.close()
        r.close()


def test_asyncio_subkey_expiry_batch(subkey_notifying):
    async def main() -> list[tuple[bytes, bytes]]:
        r = redis.asyncio.Redis(port=subkey_notifying.port, protocol=3)
        p = r.pubsub()
        try:
            await p.subscribe("__subkeyspace@0__:h")
            assert (await p.get_message(timeout=TIMEOUT))["type"] == "subscribe"
            await r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
            await r.hpexpire("h", 1, "a", "b")
            got = []
            while len(got) < 3:  # the expiry comes from the server's own cycle
                m = await p.get_message(timeout=TIMEOUT, ignore_subscribe_messages=True)
                if m is not None:
                    got.append((m["channel"], m["data"]))
            return got
        finally:
            await p.aclose()
            await r.aclose()

    assert asyncio.run(main()) == [(b"__subkeyspace@0__:h", b"hset|1:a,1:b,1:c"),
                                   (b"__subkeyspace@0__:h", b"hexpire|1:a,1:b"),
                                   (b"__subkeyspace@0__:h", b"hexpired|1:a,1:b")]
