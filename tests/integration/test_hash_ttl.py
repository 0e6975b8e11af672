"""Hash field expiry over real sockets with redis-py (its hexpire/httl/...
methods), and field TTLs across DEBUG RELOAD, an RDB restart and an AOF
restart.  redis-server 7.0.15 has none of these commands: the replies follow
https://redis.io/docs/latest/commands/hexpire/ and the other command pages
cited in tests/unit/test_hash_ttl.py.  Deadlines are far away (or already
past), so nothing here depends on timing.
"""

from __future__ import annotations

import time

import pytest
import redis

from tidelog.server.embed import EmbeddedServer

FAR = 10_000  # seconds


@pytest.fixture
def srv(tmp_path):
    server = EmbeddedServer(port=0, save="", dir=str(tmp_path / "tidelog")).start()
    yield server
    server.stop()


def test_commands_over_redis_py(srv):
    with redis.Redis(port=srv.port) as r:
        r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
        assert r.hexpire("h", FAR, "a", "zz") == [1, -2]
        assert r.hexpire("h", FAR, "a", nx=True) == [0]
        assert r.hpexpire("h", FAR * 1000, "b", xx=True) == [0]
        assert r.httl("h", "a", "b") == [FAR, -1]
        assert 0 < r.hpttl("h", "a")[0] <= FAR * 1000
        now = int(time.time())
        assert now + FAR - 5 <= r.hexpiretime("h", "a")[0] <= now + FAR + 5
        assert r.hpexpireat("h", int(time.time() * 1000) - 1, "c") == [2]
        assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
        assert r.hlen("h") == 2
        assert r.object("encoding", "h") == b"listpackex"
        assert r.hpersist("h", "a", "b", "zz") == [1, -1, -2]
        assert r.hgetex("h", "a", "b", ex=FAR) == [b"1", b"2"]
        assert r.httl("h", "a", "b") == [FAR, FAR]
        assert r.hsetex("h", "d", "4", px=FAR * 1000) == 1
        assert r.hpttl("h", "d")[0] > 0
        assert r.hexpireat("h", 1, "a", "b", "d") == [2, 2, 2]
        assert r.exists("h") == 0  # the last field took the key with it
        r.set("s", "x")
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            r.hexpire("s", 10, "f")
        with pytest.raises(redis.ResponseError, match="invalid expire time, must be >= 0"):
            r.execute_command("HEXPIRE", "nokey", -1, "FIELDS", 1, "f")


def _fill(r: redis.Redis) -> None:
    r.hset("small", mapping={"a": "1", "b": "2"})
    r.hexpire("small", FAR, "b")
    r.hset("big", mapping={f"f{i}": "v" for i in range(600)})
    r.hexpire("big", FAR, "f1", "f2")
    r.hset("plain", "x", "y")


def _check(r: redis.Redis) -> None:
    assert r.httl("small", "a", "b")[0] == -1 and r.httl("small", "a", "b")[1] > FAR - 60
    assert r.object("encoding", "small") == b"listpackex"
    assert [t > FAR - 60 for t in r.httl("big", "f1", "f2", "f3")[:2]] == [True, True]
    assert r.httl("big", "f3") == [-1]
    assert r.hlen("big") == 600 and r.hgetall("plain") == {b"x": b"y"}


def test_debug_reload_and_rdb_restart_keep_ttls(tmp_path):
    data = tmp_path / "data"
    server = EmbeddedServer(port=0, save="", dir=str(data)).start()
    try:
        with redis.Redis(port=server.port) as r:
            _fill(r)
            assert r.execute_command("DEBUG", "RELOAD")
            _check(r)
            assert r.save()
    finally:
        server.stop()
    assert (data / "dump.rdb").read_bytes().startswith(b"REDIS0012")
    server = EmbeddedServer(port=0, save="", dir=str(data)).start()
    try:
        with redis.Redis(port=server.port) as r:
            _check(r)
    finally:
        server.stop()


def _wait_rewrite(r: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"] or \
            r.info("persistence")["aof_rewrites"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_aof_restart_keeps_ttls(tmp_path, preamble):
    data = tmp_path / "aof"
    options = dict(port=0, save="", dir=str(data), appendonly="yes",
                   aof_use_rdb_preamble=preamble)
    server = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=server.port) as r:
            _fill(r)
            assert r.bgrewriteaof()
            _wait_rewrite(r)  # the base: an RDB 12 preamble, or HSET + HPEXPIREAT
            r.hpexpireat("small", 1, "a")  # propagated as HDEL
    finally:
        server.stop()
    base = next((data / "appendonlydir").glob("*.base.*")).read_bytes()
    assert base.startswith(b"REDIS0012") if preamble == "yes" else b"HPEXPIREAT" in base
    server = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=server.port) as r:
            assert r.hgetall("small") == {b"b": b"2"}
            assert r.httl("small", "b")[0] > FAR - 60
            assert r.httl("big", "f1", "f3")[1] == -1
    finally:
        server.stop()
