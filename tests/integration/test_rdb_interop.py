"""RDB snapshots against the real thing: Tidelog's dump.rdb loads in Debian's
redis-server 7.0.15 (and passes redis-check-rdb), redis-server's dump.rdb
loads in Tidelog, and a tidelog-server process keeps its data across SAVE,
SHUTDOWN SAVE and SIGTERM restarts, and serves while BGSAVE runs."""

from __future__ import annotations

import subprocess
import time

import pytest
import redis

from tests.support.processes import ProcessGroup, ServerProcess
from tests.support.rawclient import RawClient, encode_command
from tests.support.rdb_interop import REDIS_CHECK_RDB, redis_on_our_dump
from tests.support.redis_oracle import REDIS_SERVER, free_port
from tidelog.persistence import rdb
from tidelog.server.embed import EmbeddedServer

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed: "
                                 "RDB interop tests skipped (`make test` as root installs it)")


def fill(r: redis.Redis) -> None:
    """The same commands on either server: streams with groups, PELs,
    consumers, deleted entries, node sizes 1 and 100; strings with TTLs; 3 DBs."""
    r.config_set("stream-node-max-entries", "100")
    for i in range(1, 251):
        r.xadd("s", {"f": i, "g": "x" * (i % 9)} if i % 4 else {"other": i}, id=f"{i}-1")
    r.xdel("s", "5-1", "6-1", "120-1")
    r.xgroup_create("s", "g1", "0")
    r.xgroup_create("s", "g2", "$")
    r.xgroup_create("s", "g3", "0", entries_read=0)
    r.xreadgroup("g1", "alice", {"s": ">"}, count=10)
    r.xreadgroup("g1", "bob", {"s": ">"}, count=4)
    r.xack("s", "g1", "2-1")
    r.xclaim("s", "g1", "carol", 0, ["3-1"])
    r.xgroup_createconsumer("s", "g1", "idle")
    r.config_set("stream-node-max-entries", "1")
    for i in range(1, 6):
        r.xadd("tiny", {"n": i}, id=f"0-{i}")
    r.xdel("tiny", "0-2")
    r.xadd("emptied", {"a": "b"}, id="9-9", maxlen=0)
    r.config_set("stream-node-max-entries", "100")
    r.set("str", "value " * 20)
    r.set("int", 12345)
    r.set("ttl", "v", px=600_000)
    r.execute_command("SELECT", 2)
    r.xadd("s2", {"k": "v"}, id="1-1")
    r.set("db2", "x", ex=3600)
    r.execute_command("SELECT", 0)


def views(r: redis.Redis) -> dict:
    """What a client sees, per (db, key): stream info, ranges, PELs, TTLs."""
    out = {}
    for db in (0, 2):
        r.execute_command("SELECT", db)
        for key in sorted(r.keys("*")):
            pttl = r.pttl(key)
            # TTLs in whole minutes: the clocks of two reads differ a little
            view: dict = {"type": r.type(key), "ttl": round(pttl / 60000) if pttl > 0 else pttl}
            if view["type"] == b"stream":
                full = r.execute_command("XINFO", "STREAM", key, "FULL")
                view["info"] = full
                view["range"] = r.xrange(key)
                groups = r.xinfo_groups(key)
                view["pending"] = [  # idle times aside: they go on growing
                    [{k: v for k, v in p.items() if k != "time_since_delivered"}
                     for p in r.xpending_range(key, g["name"], "-", "+", 100)]
                    for g in groups]
                view["summary"] = [r.xpending(key, g["name"]) for g in groups]
            else:
                view["value"] = r.get(key)
            out[(db, key)] = view
    r.execute_command("SELECT", 0)
    return out


_NOT_IN_7_0 = {"active-time", "idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked",
               "iids-added", "iids-duplicates", "nacked-count"}


def _as_7_0(value):
    """Tidelog's XINFO STREAM FULL has fields Redis 7.0 lacks (active-time,
    IDMP, nacked-count): drop those, compare the rest exactly."""
    if isinstance(value, dict):
        return {k: _as_7_0(v) for k, v in value.items()
                if (k.decode() if isinstance(k, bytes) else k) not in _NOT_IN_7_0}
    if isinstance(value, (list, tuple)):
        return [_as_7_0(v) for v in value]
    return value


def comparable(seen: dict) -> dict:
    for view in seen.values():
        if "info" in view:
            view["info"] = _as_7_0(view["info"])
    return seen


@needs_redis
def test_tidelog_dump_loads_in_redis(tidelog_srv, processes, tmp_path):
    with redis.Redis(port=tidelog_srv.port) as r:
        fill(r)
        assert r.save()
        ours = comparable(views(r))
    oracle = redis_on_our_dump(tidelog_srv, processes, tmp_path)
    with redis.Redis(port=oracle.port) as theirs:
        assert theirs.dbsize() == 6
        assert comparable(views(theirs)) == ours


def test_redis_check_rdb_accepts_our_file(tmp_path):
    if REDIS_CHECK_RDB is None:
        pytest.skip("redis-check-rdb (Debian's redis-tools) is not installed")
    srv = EmbeddedServer(port=0, save="", dir=str(tmp_path)).start()
    try:
        with redis.Redis(port=srv.port) as r:
            fill(r)
            r.config_set("rdbcompression", "no")
            assert r.save()
    finally:
        srv.stop()
    check = subprocess.run([REDIS_CHECK_RDB, str(tmp_path / "dump.rdb")], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0 and "Checksum OK" in check.stdout, check.stdout


@needs_redis
def test_redis_dump_loads_in_tidelog(tidelog_srv, processes, tmp_path):
    oracle = processes.redis("--dir", str(tmp_path), "--dbfilename", "redis.rdb")
    with redis.Redis(port=oracle.port) as theirs:
        fill(theirs)
        theirs.set("long", "abc" * 1000)  # LZF-compressed in the file
        assert theirs.save()
        theirs.delete("long")
        expected = comparable(views(theirs))
    info = tidelog_srv.call(lambda: rdb.load_file(tidelog_srv.engine, str(tmp_path / "redis.rdb")))
    assert info.keys == 9 and info.version == 10
    with redis.Redis(port=tidelog_srv.port) as r:
        assert r.get("long") == b"abc" * 1000
        r.delete("long")
        assert comparable(views(r)) == expected


def _start(processes: ProcessGroup, port: int, *extra: str) -> ServerProcess:
    return processes.tidelog(["--port", str(port), "--dir", str(processes.workdir / "data"),
                              *extra], port=port)


def shutdown(port: int, *flags: str) -> None:
    """SHUTDOWN on a raw socket: Redis closes the connection without a reply."""
    with RawClient(port) as client:
        client.send_raw(encode_command(["SHUTDOWN", *flags]))
        assert client.read_until_closed() == b""


def test_server_restarts_with_its_data(processes):
    port = free_port()
    proc = _start(processes, port)
    with redis.Redis(port=port) as r:
        fill(r)
        before = comparable(views(r))
        assert r.save()
        r.xadd("s", {"after": "save"}, id="999-1")  # kept by SHUTDOWN SAVE below
        after = comparable(views(r))
    proc.kill()  # SIGKILL: only the SAVE is on disk
    proc = _start(processes, port)
    with redis.Redis(port=port) as r:
        assert comparable(views(r)) == before
        assert "DB loaded from disk" in proc.stdout
        r.xadd("s", {"after": "save"}, id="999-1")
        assert comparable(views(r)) == after
    shutdown(port, "SAVE")
    assert proc.wait() == 0
    proc = _start(processes, port)
    with redis.Redis(port=port) as r:
        assert comparable(views(r)) == after
        r.set("by-sigterm", "1")  # save points are configured by default
    assert proc.terminate() == 0
    proc = _start(processes, port)
    with redis.Redis(port=port) as r:
        assert r.get("by-sigterm") == b"1"
    shutdown(port, "NOSAVE")
    assert proc.wait() == 0


def test_bgsave_serves_while_the_child_writes(processes):
    port = free_port()
    proc = _start(processes, port, "--save", "")
    with redis.Redis(port=port) as r:
        pipe = r.pipeline(transaction=False)
        for i in range(20_000):
            pipe.xadd("big", {"n": i, "payload": "y" * 40})
        pipe.execute()
        assert r.bgsave() in (True, b"Background saving started")
        assert r.info("persistence")["rdb_bgsave_in_progress"] in (0, 1)
        for i in range(200):  # served while the child writes
            r.xadd("big", {"late": i})
        assert r.xlen("big") == 20_200
        deadline = time.monotonic() + 30
        while r.info("persistence")["rdb_bgsave_in_progress"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        info = r.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok" and info["rdb_saves"] == 1
        assert info["rdb_changes_since_last_save"] <= 200
        with pytest.raises(redis.ResponseError, match="syntax error"):
            r.execute_command("BGSAVE", "NOW")
    proc.kill()
    proc = _start(processes, port, "--save", "")
    with redis.Redis(port=port) as r:  # the snapshot is from the fork: before the 200
        assert r.xlen("big") == 20_000


def test_bad_dump_stops_the_start_with_the_offset(processes, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "dump.rdb").write_bytes(b"REDIS0010\xfe\x00\x00\x05hello")  # cut short
    proc = processes.tidelog(["--port", str(free_port()), "--dir", str(data)], ready=False)
    assert proc.wait() == 1
    assert "Fatal error loading the DB" in proc.stdout and "offset" in proc.stdout


OTHER_TYPES_LIBRARY = """#!lua name=kinds
redis.register_function('one', function() return 1 end)"""


def other_types(r: redis.Redis) -> dict:
    """What a client reads of the lists, sets, hashes, sorted sets and functions."""
    return {
        "small_list": r.lrange("small_list", 0, -1), "big_list": r.lrange("big_list", 0, -1),
        "intset": sorted(r.smembers("intset")), "set": sorted(r.smembers("set")),
        "small_hash": r.hgetall("small_hash"), "big_hash": r.hgetall("big_hash"),
        "small_zset": r.zrange("small_zset", 0, -1, withscores=True),
        "big_zset": r.zrange("big_zset", 0, -1, withscores=True),
        "types": [r.type(k) for k in ("small_list", "intset", "small_hash", "small_zset")],
        "ttl": r.pttl("big_list") > 0,
        "functions": r.function_list(),  # RESP2: [name, lib, engine, ..., functions, [...]]
    }


@needs_redis
def test_redis_dump_of_every_type_loads_in_tidelog(tidelog_srv, processes, tmp_path):
    """Lists, sets, hashes and sorted sets in their compact and their large
    encodings, and a function library, from redis-server's own dump.rdb."""
    oracle = processes.redis("--dir", str(tmp_path), "--dbfilename", "types.rdb")
    with redis.Redis(port=oracle.port, decode_responses=True) as theirs:
        theirs.rpush("small_list", "a", "b", 3)
        theirs.rpush("big_list", *[f"item-{i}" * 20 for i in range(300)])
        theirs.pexpire("big_list", 600_000)
        theirs.sadd("intset", 1, 2, 300000)
        theirs.sadd("set", *[f"m{i}" for i in range(300)])
        theirs.hset("small_hash", mapping={"f": "v", "n": 1})
        theirs.hset("big_hash", mapping={f"f{i}": "v" * (i % 100) for i in range(300)})
        theirs.zadd("small_zset", {"a": 1, "b": 2.5})
        theirs.zadd("big_zset", {f"m{i}": i / 3 for i in range(300)})
        theirs.function_load(OTHER_TYPES_LIBRARY)
        assert theirs.save()
        expected = other_types(theirs)
    info = tidelog_srv.call(lambda: rdb.load_file(tidelog_srv.engine, str(tmp_path / "types.rdb")))
    assert info.keys == 8
    with redis.Redis(port=tidelog_srv.port, decode_responses=True) as r:
        assert other_types(r) == expected
        assert r.fcall("one", 0) == 1
