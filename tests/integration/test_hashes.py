"""Hashes across persistence, against the real redis-server 7.0.15:

* Tidelog's dump.rdb (a listpack hash as type 16, a hashtable one as type 4)
  passes redis-check-rdb and loads in redis-server with the same contents,
  encodings and TTLs; redis-server's dump.rdb loads in Tidelog the same way
  (small hashes in the same field order);
* the AOF rewrite (HSET batches of 64 pairs) replays in Tidelog after a
  restart and in redis-server;
* DEBUG RELOAD keeps every hash, and turns a shrunk hashtable back into a
  listpack as Redis does when it loads.
"""

from __future__ import annotations

import subprocess
import time

import pytest
import redis

from tests.support.rdb_interop import redis_on_our_dump
from tests.support.redis_oracle import REDIS_SERVER, free_port, wait_for_port
from tidelog.persistence import rdb

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def fill(r: redis.Redis) -> None:
    """The same hashes on either server."""
    r.hset("small", mapping={"b": "2", "a": "1", "n": "-12345", "big": "9223372036854775807",
                             "empty": "", "c": "x" * 64})
    r.hset("small", "a", "10")   # keeps its place
    r.hset("big", mapping={f"f{i}": f"value-{i}" * (i % 5) for i in range(700)})
    r.hset("long", mapping={"f": "v" * 200, "g": "1"})
    r.hset("shrunk", mapping={f"k{i}": i for i in range(530)})
    r.hdel("shrunk", *[f"k{i}" for i in range(500)])  # a hashtable of 30 fields
    r.hset("ttl", "f", "v")
    r.pexpire("ttl", 600_000)
    r.hset("binary", b"\x00\xff\r\n", b"\x01" * 30)


def views(r: redis.Redis) -> dict:
    out = {}
    for key in sorted(r.keys("*")):
        pttl = r.pttl(key)
        out[key] = {
            "type": r.type(key),
            "items": list(r.hgetall(key).items()),
            "encoding": r.object("encoding", key),
            "ttl": round(pttl / 60000) if pttl > 0 else pttl,
        }
    return out


def unordered(seen: dict, *keys: bytes) -> dict:
    """Big hashes list their fields in each server's hash order: compare as sets."""
    for key in keys:
        seen[key]["items"] = sorted(seen[key]["items"])
    return seen


@needs_redis
def test_tidelog_dump_loads_in_redis(tidelog_srv, processes, tmp_path):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        assert r.object("encoding", "small") == b"listpack"
        assert r.object("encoding", "big") == b"hashtable"
        assert r.save()
        # Redis loads the shrunk hashtable (30 short fields) as a listpack.
        ours = views(r)
    ours[b"shrunk"]["encoding"] = b"listpack"
    oracle = redis_on_our_dump(tidelog_srv, processes, tmp_path)
    with redis.Redis(port=oracle.port) as theirs:
        assert unordered(views(theirs), b"big", b"long", b"shrunk") == \
            unordered(ours, b"big", b"long", b"shrunk")


@needs_redis
def test_redis_dump_loads_in_tidelog(tidelog_srv, processes, tmp_path):
    oracle = processes.redis("--dir", str(tmp_path), "--dbfilename", "redis.rdb")
    with redis.Redis(port=oracle.port) as theirs:
        fill(theirs)
        assert theirs.save()
        expected = views(theirs)
    expected[b"shrunk"]["encoding"] = b"listpack"  # as Redis itself reloads it
    info = tidelog_srv.call(lambda: rdb.load_file(tidelog_srv.engine, str(tmp_path / "redis.rdb")))
    assert info.keys == len(expected)
    with redis.Redis(port=tidelog_srv.port) as r:
        assert unordered(views(r), b"big", b"long", b"shrunk") == \
            unordered(expected, b"big", b"long", b"shrunk")
        # small hashes: the same field order as Redis's listpack
        assert views(r)[b"small"]["items"] == expected[b"small"]["items"]


def test_debug_reload_keeps_hashes(tidelog_srv):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        before = views(r)
        assert r.object("encoding", "shrunk") == b"hashtable"
        assert r.execute_command("DEBUG", "RELOAD")
        after = views(r)
    before[b"shrunk"]["encoding"] = b"listpack"
    assert unordered(after, b"big", b"long", b"shrunk") == \
        unordered(before, b"big", b"long", b"shrunk")


def _wait_rewrite(r: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while r.info("persistence")["aof_rewrite_in_progress"] or \
            r.info("persistence")["aof_rewrites"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_aof_rewrite_round_trip(processes, tmp_path):
    port = free_port()
    args = ["--port", str(port), "--dir", str(processes.workdir / "data"), "--appendonly", "yes",
            "--aof-use-rdb-preamble", "no", "--save", ""]
    proc = processes.tidelog(args, port=port)
    with redis.Redis(port=port) as r:
        fill(r)
        assert r.bgrewriteaof()
        _wait_rewrite(r)
        r.hset("after", "f", "v")        # in the new incremental file
        r.hincrbyfloat("small", "a", "0.5")
        expected = views(r)
    expected[b"shrunk"]["encoding"] = b"listpack"  # 30 short fields replayed by HSET
    base = next((tmp_path / "data" / "appendonlydir").glob("*.base.aof")).read_bytes()
    assert base.count(b"HSET") >= 1 + 700 // 64  # the big hash in batches of 64 pairs
    assert proc.terminate() == 0
    proc = processes.tidelog(args, port=port)
    with redis.Redis(port=port) as r:
        assert views(r) == expected
    assert proc.terminate() == 0
    if REDIS_SERVER is None:
        return
    redis_port = free_port()
    processes.popen([REDIS_SERVER, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "yes", "--dir", str(tmp_path / "data")],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(redis_port)
    with redis.Redis(port=redis_port) as theirs:
        deadline = time.monotonic() + 20
        while theirs.info("persistence")["loading"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert unordered(views(theirs), b"big", b"long", b"shrunk") == \
            unordered(expected, b"big", b"long", b"shrunk")
