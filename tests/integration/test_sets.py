"""Sets across persistence, against the real thing: Tidelog's dump.rdb with
sets (intset, listpack, hashtable; small and big; binary members; TTLs)
loads in redis-server 7.0.15 and passes redis-check-rdb, redis-server's
dump.rdb loads in Tidelog, DEBUG RELOAD keeps sets and their encodings, an
RDB version 11 file with a Redis 7.2 set listpack (type 20) loads, and an
AOF rewrite (SADD batches, no RDB preamble) plus the SPOP/SMOVE/STORE
effects after it replay to the same sets.  redis-benchmark's SADD and SPOP
tests run against a tidelog-server."""

from __future__ import annotations

import os
import time

import pytest
import redis

from tests.support.benchmark import needs_redis_benchmark, run_redis_benchmark
from tests.support.rdb_interop import redis_on_our_dump
from tests.support.redis_oracle import REDIS_SERVER
from tidelog.persistence import rdb
from tidelog.rdb.format import length_bytes, string_bytes
from tidelog.server.embed import EmbeddedServer
from tidelog.types import listpack

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")

BIG_STRINGS = [f"member:{i}" for i in range(1000)]


def fill(r: redis.Redis) -> None:
    """The same commands on either server."""
    r.sadd("ints", 5, -3, 100, 2**40, -(2**63), 2**63 - 1)
    r.sadd("bigints", *range(600))                  # hashtable (> 512)
    r.sadd("small", "a", "b", 1, 2)                 # listpack (7.2+) / hashtable (7.0)
    r.sadd("big", *BIG_STRINGS)                     # hashtable
    r.sadd("long", "x" * 100, "y")                  # hashtable: a long member
    r.sadd("bin", b"\x00\xff", b"", b"\r\n", "caf\u00e9")
    r.sadd("compress", "abc" * 50, "def" * 50)      # LZF-compressed members
    r.sadd("ttl", 1, 2, 3)
    r.pexpire("ttl", 600_000)
    r.execute_command("SELECT", 3)
    r.sadd("db3", "m")
    r.execute_command("SELECT", 0)


def views(r: redis.Redis, with_small_encoding: bool = False) -> dict:
    out = {}
    for db in (0, 3):
        r.execute_command("SELECT", db)
        for key in sorted(r.keys("*")):
            pttl = r.pttl(key)
            view = {"type": r.type(key), "members": sorted(r.smembers(key)),
                    "ttl": round(pttl / 60000) if pttl > 0 else pttl}
            encoding = r.object("encoding", key)
            if encoding != b"listpack" and key not in (b"small", b"bin", b"compress", b"db3"):
                view["encoding"] = encoding                 # where 7.0 and 7.2+ agree
            elif with_small_encoding:
                view["encoding"] = encoding
            out[(db, key)] = view
    r.execute_command("SELECT", 0)
    return out


@needs_redis
def test_tidelog_dump_loads_in_redis(tidelog_srv, processes, tmp_path):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        assert r.save()
        ours = views(r)
    assert ours[(0, b"ints")]["encoding"] == b"intset"
    assert ours[(0, b"big")]["encoding"] == b"hashtable"
    oracle = redis_on_our_dump(tidelog_srv, processes, tmp_path)
    with redis.Redis(port=oracle.port) as theirs:
        assert theirs.dbsize() == 8
        assert views(theirs) == ours


@needs_redis
def test_redis_dump_loads_in_tidelog(tidelog_srv, processes, tmp_path):
    oracle = processes.redis("--dir", str(tmp_path), "--dbfilename", "redis.rdb")
    with redis.Redis(port=oracle.port) as theirs:
        fill(theirs)
        assert theirs.save()
        expected = views(theirs)
    info = tidelog_srv.call(lambda: rdb.load_file(tidelog_srv.engine, str(tmp_path / "redis.rdb")))
    assert info.keys == 9
    with redis.Redis(port=tidelog_srv.port) as r:
        assert views(r) == expected
        # loaded as Redis 7.2+ would load them
        assert r.object("encoding", "small") == b"listpack"
        assert r.object("encoding", "ints") == b"intset"


def test_debug_reload_keeps_sets_and_encodings(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        before = views(r, with_small_encoding=True)
        assert before[(0, b"small")]["encoding"] == b"listpack"
        assert r.execute_command("DEBUG", "RELOAD")
        assert views(r, with_small_encoding=True) == before
        assert r.memory_usage("big") > r.memory_usage("small") > 0
        assert b"encoding:intset" in r.execute_command("DEBUG", "OBJECT", "ints")
        assert r.type("small") == b"set"
        assert sorted(r.scan(0, _type="set", count=1000)[1]) == sorted(
            [b"ints", b"bigints", b"small", b"big", b"long", b"bin", b"compress", b"ttl"])


def test_rdb_11_set_listpack_loads():
    """A Redis 7.2 file (RDB 11) holding a set listpack (type 20)."""
    blob = listpack.pack([b"a", 7, b"bb", -3])
    body = (b"REDIS0011" + b"\xfe\x00" + b"\x14" + string_bytes(b"k", False)
            + length_bytes(len(blob)) + blob + b"\xff")
    snap = rdb.loads(body + b"\x00" * 8)          # checksum 0: not computed
    ((key, value, expire),) = snap.dbs[0]
    assert key == b"k" and expire is None
    assert value.object_encoding() == b"listpack"
    assert value.members() == [b"a", b"7", b"bb", b"-3"]


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
            r.sadd("huge", *range(5000))
            assert r.bgrewriteaof()
            _wait_rewrite(r)
            assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
            # effects after the rewrite, in the incremental file
            r.spop("huge", 1500)
            r.spop("huge")
            r.spop("ints", 100)                      # the whole set: DEL
            r.smove("big", "moved", "member:7")
            r.sinterstore("inter", "bigints", "huge")
            r.sdiffstore("diff", "big", "small")
            r.srem("small", "a")
            expected = views(r, with_small_encoding=True)
    finally:
        srv.stop()
    base = [n for n in os.listdir(tmp_path / "appendonlydir") if ".base." in n]
    assert len(base) == 1 and base[0].endswith(".aof")
    text = (tmp_path / "appendonlydir" / base[0]).read_bytes()
    assert text.count(b"$4\r\nSADD\r\n$4\r\nhuge\r\n") == 5000 // 64 + 1
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            assert views(r, with_small_encoding=True) == expected
            assert r.scard("huge") == 5000 - 1501
    finally:
        srv.stop()


@needs_redis_benchmark
def test_redis_benchmark_sadd_spop(tidelog_srv):
    assert run_redis_benchmark(tidelog_srv.port, "-t", "sadd,spop", "-n", "2000") == \
        ["SADD", "SPOP"]
    with redis.Redis(port=tidelog_srv.port) as r:
        assert r.scard("myset") == 0      # 2000 SADDs of one member, then 2000 SPOPs


def test_config_limits_drive_the_encodings(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        assert r.config_get("set-max-*") == {"set-max-intset-entries": "512",
                                             "set-max-listpack-entries": "128",
                                             "set-max-listpack-value": "64"}
        assert r.config_set("set-max-listpack-entries", 3)
        assert r.config_set("set-max-listpack-value", "1kb")
        assert r.config_get("set-max-listpack-value") == {"set-max-listpack-value": "1024"}
        r.sadd("a", "x" * 1000, "b", "c")
        assert r.object("encoding", "a") == b"listpack"
        r.sadd("a", "d")
        assert r.object("encoding", "a") == b"hashtable"
        assert r.config_set("set-max-intset-entries", 2)
        r.sadd("i", 1, 2)
        assert r.object("encoding", "i") == b"intset"
        r.smove("a", "i", "b")                # 2 ints + "b": a listpack of 3
        assert r.object("encoding", "i") == b"listpack"
        r.sadd("j", 1, 2, 3)                  # hint 3: past the intset limit, within the listpack one
        assert r.object("encoding", "j") == b"listpack"
        with pytest.raises(redis.ResponseError):
            r.config_set("set-max-listpack-entries", -1)
