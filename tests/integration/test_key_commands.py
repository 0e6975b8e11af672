"""The generic key commands over real sockets with redis-py: values made by
COPY, MOVE, SWAPDB and RESTORE (from payloads of Tidelog and of a real
redis-server 7.0.15) survive DEBUG RELOAD; redis-py's own dump/restore and
sort helpers work against Tidelog."""

from __future__ import annotations

import pytest
import redis

from tests.support.redis_oracle import REDIS_SERVER

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def fill(r: redis.Redis) -> None:
    r.set("str", "v" * 50)
    r.set("int", 42, ex=3600)
    r.hset("h", mapping={"a": 1, "b": 2})
    r.sadd("s", 3, 1, 2)
    r.sadd("sl", "x", "y")
    for i in range(1, 20):
        r.xadd("x", {"n": i}, id=f"{i}-0")
    r.xgroup_create("x", "g", "0")
    r.xreadgroup("g", "alice", {"x": ">"}, count=5)


def view(r: redis.Redis, db: int) -> dict:
    r.execute_command("SELECT", db)
    out = {}
    for key in sorted(r.keys("*")):
        kind = r.type(key)
        if kind == b"string":
            value = r.get(key)
        elif kind == b"hash":
            value = r.hgetall(key)
        elif kind == b"set":
            value = sorted(r.smembers(key))
        else:
            value = (r.xrange(key), r.xpending(key, "g"))
        out[key] = (kind, value, r.ttl(key) > 0)
    r.execute_command("SELECT", 0)
    return out


def test_copies_moves_and_restores_survive_reload(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        for key in (b"str", b"int", b"h", b"s", b"sl", b"x"):
            assert r.copy(key, key + b"-c", destination_db=1)
            assert r.restore(key + b"-r", 0, r.dump(key))
        assert r.move("sl", 2)
        assert r.swapdb(2, 3)
        before = [view(r, db) for db in range(4)]
        assert before[1][b"int-c"][2] and before[3][b"sl"][1] == [b"x", b"y"]
        assert r.execute_command("DEBUG", "RELOAD")
        assert [view(r, db) for db in range(4)] == before
        assert r.sort("s", desc=True) == [b"3", b"2", b"1"]
        assert r.sort("s", by="nosort", get="#", alpha=True) == [b"1", b"2", b"3"]


@needs_redis
def test_payloads_of_a_real_server_restore(tidelog_srv, processes, tmp_path):
    oracle = processes.redis("--dir", str(tmp_path))
    with redis.Redis(port=oracle.port) as theirs, redis.Redis(port=tidelog_srv.port) as ours:
        fill(theirs)
        for key in theirs.keys("*"):
            assert ours.restore(key, 0, theirs.dump(key))
            assert theirs.restore(key + b"-back", 0, ours.dump(key))
        def values(r):  # TTLs aside: RESTORE ... 0 sets none
            return {k: v[:2] for k, v in view(r, 0).items()}
        theirs_view = values(theirs)
        assert values(ours) == {k: v for k, v in theirs_view.items() if not k.endswith(b"-back")}
        assert {k[:-5]: v for k, v in theirs_view.items() if k.endswith(b"-back")} == values(ours)
