"""Commands and options newer than 7.0 from redis-py over real sockets (sync
and asyncio, RESP2 and RESP3): SUNIONCARD and SDIFFCARD (8.10), AGGREGATE
COUNT (8.8).  Pages: https://redis.io/docs/latest/commands/sunioncard/,
https://redis.io/docs/latest/commands/sdiffcard/,
https://redis.io/docs/latest/commands/zunionstore/."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio


@pytest.mark.parametrize("protocol", [2, 3])
def test_set_cards(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as c:
        c.sadd("key1", "a", "b", "c")
        c.sadd("key2", "c", "d", "e")
        assert c.execute_command("SUNIONCARD", 2, "key1", "key2") == 5
        assert c.execute_command("SUNIONCARD", 2, "key1", "key2", "APPROX", "LIMIT", 3) == 3
        assert c.execute_command("SDIFFCARD", 2, "key1", "key2") == 2
        assert c.execute_command("SDIFFCARD", 2, "key1", "key2", "LIMIT", 1) == 1
        with pytest.raises(redis.ResponseError, match="^numkeys should be greater than 0$"):
            c.execute_command("SDIFFCARD", 0, "key1")


@pytest.mark.parametrize("protocol", [2, 3])
def test_aggregate_count(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as c:
        c.zadd("s1", {"foo": 1, "bar": 1})
        c.zadd("s2", {"foo": 2, "bar": 2})
        c.zadd("s3", {"foo": 3})
        assert c.zunionstore("out", ["s1", "s2", "s3"], aggregate="COUNT") == 2
        pairs = [list(p) for p in c.zrange("out", 0, -1, withscores=True)]
        assert pairs == [[b"bar", 2.0], [b"foo", 3.0]]
        inter = c.zinter({"s1": 2, "s3": 10}, aggregate="COUNT", withscores=True)
        assert [list(p) for p in inter] == [[b"foo", 12.0]]
        assert c.zinterstore("o", ["s1", "s2"], aggregate="COUNT") == 2


def test_asyncio(tidelog):
    async def run():
        c = redis.asyncio.Redis(port=tidelog.port, protocol=3)
        try:
            await c.sadd("a", 1, 2)
            await c.sadd("b", 2, 3)
            assert await c.execute_command("SUNIONCARD", 2, "a", "b") == 3
            assert await c.execute_command("SDIFFCARD", 2, "a", "b") == 1
            await c.zadd("z1", {"m": 5})
            assert await c.zunion(["z1", "z1"], aggregate="COUNT", withscores=True) == [
                [b"m", 2.0]]
        finally:
            await c.aclose()

    asyncio.run(run())
