"""Lists across persistence, over real sockets: Tidelog's dump.rdb loads in
redis-server 7.0.15 (and passes redis-check-rdb), redis-server's loads in
Tidelog, and an AOF (rewritten as RPUSH batches, then with served blocking
pops appended as LPOP/LMOVE) brings the lists back after a restart."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.support.rdb_interop import redis_on_our_dump
from tests.support.redis_oracle import REDIS_SERVER
from tidelog.persistence import rdb
from tidelog.server.embed import EmbeddedServer

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def fill(r: redis.Redis) -> None:
    """Small, integer-looking, multi-node and big-element lists, a TTL, two DBs."""
    r.rpush("small", "a", "b", "c")
    r.rpush("ints", 0, 7, -1, 127, 128, -4096, 65536, 2**40, -(2**63), 2**63 - 1, "01", "+1")
    r.rpush("nodes", *[f"element-{i}-" + "x" * (i % 50) for i in range(3000)])
    r.rpush("huge", "h" * 20000, "tail")
    r.lpush("ttl", "v")
    r.pexpire("ttl", 600_000)
    r.execute_command("SELECT", 2)
    r.rpush("other", "z")
    r.execute_command("SELECT", 0)


def views(r: redis.Redis) -> dict:
    out = {}
    for db in (0, 2):
        r.execute_command("SELECT", db)
        for key in sorted(r.keys("*")):
            pttl = r.pttl(key)
            out[(db, key)] = (r.type(key), r.lrange(key, 0, -1),
                              round(pttl / 60000) if pttl > 0 else pttl)
    r.execute_command("SELECT", 0)
    return out


@needs_redis
@pytest.mark.parametrize("compression", ["yes", "no"])
def test_tidelog_dump_loads_in_redis(tidelog_srv, processes, tmp_path, compression):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        r.config_set("rdbcompression", compression)
        assert r.save()
        ours = views(r)
    oracle = redis_on_our_dump(tidelog_srv, processes, tmp_path)
    with redis.Redis(port=oracle.port) as theirs:
        assert theirs.dbsize() == 5
        assert views(theirs) == ours


@needs_redis
def test_redis_dump_loads_in_tidelog(tidelog_srv, processes, tmp_path):
    oracle = processes.redis("--dir", str(tmp_path), "--dbfilename", "redis.rdb")
    with redis.Redis(port=oracle.port) as theirs:
        fill(theirs)
        theirs.rpush("compressible", "abc" * 1000, "abc" * 1000)  # LZF in the file
        assert theirs.save()
        expected = views(theirs)
    info = tidelog_srv.call(lambda: rdb.load_file(tidelog_srv.engine, str(tmp_path / "redis.rdb")))
    assert info.keys == 7
    with redis.Redis(port=tidelog_srv.port) as r:
        assert views(r) == expected
        assert r.object("encoding", "small") == b"listpack"
        assert r.object("encoding", "nodes") == b"quicklist"


def _wait_rewrite(r: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while True:
        info = r.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return
        assert time.monotonic() < deadline, info
        time.sleep(0.05)


@pytest.mark.parametrize("preamble", ["no", "yes"])
def test_aof_rewrite_and_served_pops_survive_a_restart(tmp_path, preamble):
    options = dict(port=0, dir=str(tmp_path), save="", appendonly="yes",
                   appendfsync="always", aof_use_rdb_preamble=preamble)
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            fill(r)
            _wait_rewrite(r)
            assert r.bgrewriteaof()
            _wait_rewrite(r)
            results = {}

            def blocked():
                with redis.Redis(port=srv.port) as other:
                    results["blmove"] = other.blmove("q", "dst", 0, "LEFT", "RIGHT")
                    results["blpop"] = other.blpop(["q2"], 0)

            worker = threading.Thread(target=blocked)
            worker.start()
            deadline = time.monotonic() + 10
            while srv.call(lambda: srv.engine.blocked_clients) != 1:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            r.rpush("q", "one", "two")
            while srv.call(lambda: srv.engine.blocked_clients) != 1:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            r.rpush("q2", "three")
            worker.join(10)
            assert results == {"blmove": b"one", "blpop": (b"q2", b"three")}
            before = views(r)
    finally:
        srv.stop()
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            assert views(r) == before
            assert r.lrange("dst", 0, -1) == [b"one"] and r.lrange("q", 0, -1) == [b"two"]
    finally:
        srv.stop()
