"""Sorted sets across persistence, against the real thing: Tidelog's dump.rdb
with sorted sets (listpack and skiplist; binary members; inf scores; TTLs)
loads in redis-server 7.0.15 and passes redis-check-rdb, redis-server's
dump.rdb (types 17 and 5) loads in Tidelog, hand-built type 3 (string
scores) and 12 (ziplist) values load, DEBUG RELOAD keeps sorted sets and
their encodings, an AOF rewrite (ZADD batches of 64 pairs, no RDB preamble)
plus the effects after it replay to the same values, the configured limits
drive the encodings, and redis-benchmark's ZADD and ZPOPMIN tests run."""

from __future__ import annotations

import math
import os
import struct
import time

import pytest
import redis

from tests.support.benchmark import needs_redis_benchmark, run_redis_benchmark
from tests.support.rdb_interop import redis_on_our_dump
from tests.support.redis_oracle import REDIS_SERVER
from tests.unit.test_hash import _ziplist
from tidelog.persistence import rdb
from tidelog.persistence.aof_rewrite import zset_commands
from tidelog.rdb import zset as rdb_zset
from tidelog.rdb.format import Reader, length_bytes, string_bytes
from tidelog.server.embed import EmbeddedServer
from tidelog.types.zset import ZSet, ZSetLimits

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def fill(r: redis.Redis) -> None:
    """The same commands on either server (scores both versions spell alike)."""
    r.zadd("small", {"a": 1, "b": 2.5, "c": -0.25, "d": 1})
    r.zadd("big", {f"member:{i}": i * 0.5 for i in range(500)})       # skiplist
    r.zadd("long", {"x" * 100: 3, "y": 4})                             # skiplist: long member
    r.zadd("inf", {"p": math.inf, "n": -math.inf, "z": 0})
    r.zadd("bin", {b"\x00\xff": 1, b"": 2, b"\r\n": 3, "caf\u00e9": 4})
    r.zadd("compress", {"abc" * 50: 1, "def" * 50: 2})                # LZF-compressed members
    r.zadd("ttl", {"a": 1})
    r.pexpire("ttl", 600_000)
    r.execute_command("SELECT", 3)
    r.zadd("db3", {"m": 7})
    r.execute_command("SELECT", 0)


def views(r: redis.Redis) -> dict:
    out = {}
    for db in (0, 3):
        r.execute_command("SELECT", db)
        for key in sorted(r.keys("*")):
            pttl = r.pttl(key)
            out[(db, key)] = {"type": r.type(key),
                              "items": r.zrange(key, 0, -1, withscores=True),
                              "encoding": r.object("encoding", key),
                              "ttl": round(pttl / 60000) if pttl > 0 else pttl}
    r.execute_command("SELECT", 0)
    return out


@needs_redis
def test_tidelog_dump_loads_in_redis(tidelog_srv, processes, tmp_path):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        assert r.save()
        ours = views(r)
    assert ours[(0, b"small")]["encoding"] == b"listpack"
    assert ours[(0, b"big")]["encoding"] == b"skiplist"
    oracle = redis_on_our_dump(tidelog_srv, processes, tmp_path)
    with redis.Redis(port=oracle.port) as theirs:
        assert theirs.dbsize() == 7
        assert views(theirs) == ours


@needs_redis
def test_redis_dump_loads_in_tidelog(tidelog_srv, processes, tmp_path):
    oracle = processes.redis("--dir", str(tmp_path), "--dbfilename", "redis.rdb")
    with redis.Redis(port=oracle.port) as theirs:
        fill(theirs)
        assert theirs.save()
        expected = views(theirs)
    info = tidelog_srv.call(lambda: rdb.load_file(tidelog_srv.engine, str(tmp_path / "redis.rdb")))
    assert info.keys == 8
    with redis.Redis(port=tidelog_srv.port) as r:
        assert views(r) == expected


def test_debug_reload_keeps_zsets_and_encodings(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        before = views(r)
        assert r.execute_command("DEBUG", "RELOAD")
        assert views(r) == before
        assert r.memory_usage("big") > r.memory_usage("small") > 0
        assert b"encoding:skiplist" in r.execute_command("DEBUG", "OBJECT", "big")
        assert r.type("small") == b"zset"
        assert sorted(r.scan(0, _type="zset", count=1000)[1]) == sorted(
            [b"small", b"big", b"long", b"inf", b"bin", b"compress", b"ttl"])


def test_old_encodings_load():
    """Type 3 (scores as text; 253/254/255 for nan/inf/-inf) and type 12 (a
    ziplist of member, score: text or integer)."""
    body = length_bytes(3) + string_bytes(b"a", False) + b"\x031.5" + string_bytes(
        b"b", False) + b"\xfe" + string_bytes(b"c", False) + b"\xff"
    z = rdb_zset.read_zset(Reader(body))
    assert z.items() == [(b"c", -math.inf), (b"a", 1.5), (b"b", math.inf)]
    assert z.encoding == b"listpack"
    blob = _ziplist([b"x", b"2.5", b"y", 7, b"z", -300])
    z = rdb_zset.read_zset_ziplist(Reader(string_bytes(blob, False)))
    assert z.items() == [(b"z", -300.0), (b"x", 2.5), (b"y", 7.0)]
    bad = length_bytes(1) + string_bytes(b"a", False) + b"\xfd"
    with pytest.raises(rdb.RdbError):
        rdb_zset.read_zset(Reader(bad))
    two = length_bytes(2) + (string_bytes(b"a", False) + struct.pack("<d", 1.0)) * 2
    with pytest.raises(rdb.RdbError):
        rdb_zset.read_zset_2(Reader(two))


def test_rewrite_batches():
    z = ZSet.built([(b"m%d" % i, i / 3) for i in range(130)], ZSetLimits())
    argvs = list(zset_commands(b"k", z))
    assert [len(a) for a in argvs] == [2 + 128, 2 + 128, 2 + 4]
    assert argvs[0][2:4] == [b"0", b"m0"] and argvs[0][4:6] == [b"0.3333333333333333", b"m1"]
    back = [(m, float(s)) for a in argvs for s, m in zip(a[2::2], a[3::2])]
    assert back == z.items()


def _wait_rewrite(r: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline, "the AOF rewrite did not finish"
        time.sleep(0.05)


def test_aof_rewrite_and_replay(tmp_path):
    options = dict(port=0, dir=str(tmp_path), save="", appendonly="yes", appendfsync="always",
                   aof_use_rdb_preamble="no")
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            fill(r)
            r.zadd("huge", {f"h{i}": i / 7 for i in range(5000)})
            r.zadd("odd", {"a": 0.1, "b": 1e-300, "c": 1.7976931348623157e308})
            assert r.bgrewriteaof()
            _wait_rewrite(r)
            assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
            # effects after the rewrite, in the incremental file
            r.zpopmin("huge", 1500)
            r.zpopmax("huge")
            r.execute_command("ZMPOP", "2", "nokey", "big", "MAX", "COUNT", "10")
            r.zincrby("small", 0.1, "a")
            r.zunionstore("u", ["small", "big"], aggregate="MAX")
            r.zrangestore("r", "big", 5, 20)
            r.zremrangebyscore("big", 10, 20)
            expected = views(r)
    finally:
        srv.stop()
    base = [n for n in os.listdir(tmp_path / "appendonlydir") if ".base." in n]
    assert len(base) == 1 and base[0].endswith(".aof")
    text = (tmp_path / "appendonlydir" / base[0]).read_bytes()
    assert text.count(b"$4\r\nZADD\r\n$4\r\nhuge\r\n") == 5000 // 64 + 1
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            assert views(r) == expected
            assert r.zcard("huge") == 5000 - 1501
            assert r.zscore("odd", "b") == 1e-300
    finally:
        srv.stop()


@needs_redis_benchmark
def test_redis_benchmark_zadd_zpopmin(tidelog_srv):
    assert run_redis_benchmark(tidelog_srv.port, "-t", "zadd,zpopmin", "-n", "2000") == \
        ["ZADD", "ZPOPMIN"]
    with redis.Redis(port=tidelog_srv.port) as r:
        assert r.type("myzset") in (b"zset", b"none")


def test_config_limits_drive_the_encodings(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        # (a glob matches the old ziplist names too, as redis-server 7.0.15 answers)
        assert r.config_get("zset-max-*") == {"zset-max-listpack-entries": "128",
                                              "zset-max-listpack-value": "64",
                                              "zset-max-ziplist-entries": "128",
                                              "zset-max-ziplist-value": "64"}
        assert r.config_set("zset-max-listpack-entries", 3)
        assert r.config_set("zset-max-listpack-value", "1kb")
        assert r.config_get("zset-max-listpack-value") == {"zset-max-listpack-value": "1024"}
        r.zadd("a", {"x" * 1000: 1, "b": 2, "c": 3})
        assert r.object("encoding", "a") == b"listpack"
        r.zadd("a", {"d": 4})
        assert r.object("encoding", "a") == b"skiplist"
        r.zrem("a", "d", "c")
        assert r.object("encoding", "a") == b"skiplist"
        assert r.config_set("zset-max-listpack-value", 2)
        r.zadd("b", {"abc": 1})
        assert r.object("encoding", "b") == b"skiplist"
        with pytest.raises(redis.ResponseError):
            r.config_set("zset-max-listpack-entries", -1)
