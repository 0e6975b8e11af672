"""MIGRATE between two Tidelog servers through redis-py, sync and asyncio,
RESP2 and RESP3: the values arrive with their TTLs, the moved keys go (a
``del`` event each, propagated as one DEL), COPY keeps them.  Replies and
errors are compared with redis-server 7.0.15 in
tests/differential/test_migrate_diff.py.

https://redis.io/docs/latest/commands/migrate/
"""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

from tidelog.server.embed import EmbeddedServer


@pytest.fixture
def other():
    srv = EmbeddedServer(port=0).start()
    yield srv
    srv.stop()
    assert srv.engine.internal_errors == 0


@pytest.mark.parametrize("protocol", [2, 3])
def test_sync_migrate_moves_and_copies(tidelog, other, protocol):
    r = redis.Redis(port=tidelog.port, protocol=protocol)
    dest = redis.Redis(port=other.port, protocol=protocol)
    try:
        r.config_set("notify-keyspace-events", "Eg")
        p = r.pubsub()
        p.subscribe("__keyevent@0__:del")
        assert p.get_message(timeout=5)["type"] == "subscribe"
        r.set("s", "v", px=600000)
        r.rpush("l", "a", "b")
        r.zadd("z", {"m": 1.5})
        assert r.migrate("127.0.0.1", other.port, ["s", "l", "missing"], 2, 5000) == b"OK"
        assert r.migrate("127.0.0.1", other.port, "z", 2, 5000, copy=True) == b"OK"
        assert r.exists("s", "l", "z") == 1
        dest.select(2)
        assert dest.get("s") == b"v" and 0 < dest.pttl("s") <= 600000
        assert dest.lrange("l", 0, -1) == [b"a", b"b"]
        assert dest.zscore("z", "m") == 1.5
        got = [p.get_message(timeout=5)["data"] for _ in range(2)]
        assert got == [b"s", b"l"]
        with pytest.raises(redis.ResponseError, match="BUSYKEY"):
            r.migrate("127.0.0.1", other.port, "z", 2, 5000)
        assert r.exists("z") == 1
        assert r.migrate("127.0.0.1", other.port, "z", 2, 5000, replace=True) == b"OK"
        assert r.exists("z") == 0
        assert r.execute_command("MIGRATE", "127.0.0.1", other.port, "z", 2, 5000) == b"NOKEY"
        p.close()
    finally:
        r.config_set("notify-keyspace-events", "")
        r.close()
        dest.close()


def test_migrate_is_propagated_as_del(tidelog, other):
    r = redis.Redis(port=tidelog.port)
    try:
        r.mset({"a": "1", "b": "2"})
        seen = []
        tidelog.call(lambda: tidelog.engine.effect_listeners.append(
            lambda batch: seen.extend(argv for _, argv in batch)))
        r.migrate("127.0.0.1", other.port, ["a", "b"], 0, 5000)
        r.migrate("127.0.0.1", other.port, ["a"], 0, 5000)  # NOKEY: nothing
        assert seen == [[b"DEL", b"a", b"b"]]
    finally:
        tidelog.call(tidelog.engine.effect_listeners.clear)
        r.close()


def test_asyncio_migrate_with_auth(tidelog, other):
    async def main() -> None:
        r = redis.asyncio.Redis(port=tidelog.port, protocol=3)
        dest = redis.asyncio.Redis(port=other.port, protocol=3)
        try:
            await dest.acl_setuser("mover", enabled=True, passwords=["+pw"], keys="*",
                                   commands=["+@all"])
            await r.hset("h", mapping={"f": "v"})
            with pytest.raises(redis.ResponseError,
                               match="^Target instance replied with error: WRONGPASS"):
                await r.execute_command("MIGRATE", "127.0.0.1", other.port, "h", 0, 5000,
                                        "AUTH2", "mover", "wrong")
            assert await r.exists("h") == 1  # an AUTH error keeps every key here
            await dest.delete("h")  # its RESTORE ran as the default user
            assert await r.execute_command("MIGRATE", "127.0.0.1", other.port, "h", 0, 5000,
                                           "AUTH2", "mover", "pw") == b"OK"
            assert await r.exists("h") == 0
            assert await dest.hgetall("h") == {b"f": b"v"}
        finally:
            await r.aclose()
            await dest.aclose()

    asyncio.run(main())
