"""TIDELOG.STAGE over real sockets: a stream staged in several APPENDs on a
Tidelog primary reaches its Tidelog replica identical; a redis-server
7.0.15 replica makes HELLO answer 0 and never gets the command; the AOF
survives ``kill -9`` mid-move (no key, no error) and after the commit (the
key); in cluster mode BEGIN is redirected like any keyed command."""

from __future__ import annotations

import random

import pytest
import redis

from tests.support.cluster import WAIT_S, ClusterNodes, require_cluster_mode
from tests.support.rawclient import RawClient
from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until
from tidelog.keyslot import key_slot
from tidelog.rdb import values
from tidelog.rdb.stream_chunks import VERSION, chunks

LINK_TIMEOUT = 30.0
TOKEN = "0123456789abcdef0123456789abcdef01234567"


def start(processes, tmp_path, name: str, *extra: str, port: int | None = None):
    port = port or free_port()
    data = tmp_path / name
    data.mkdir(exist_ok=True)
    return processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "", *extra],
                             port=port)


def fill(c: redis.Redis, key: str = "s", n: int = 600) -> None:
    """A stream with deletions, two groups, PELs and a NACK'd-free history."""
    rng = random.Random(7)
    c.xgroup_create(key, "g1", "$", mkstream=True)
    for i in range(1, n + 1):
        c.xadd(key, {"f": i, "pad": "x" * rng.randint(0, 60)}, id=f"{i}-{i % 3}")
    c.xgroup_create(key, "g2", "0")
    c.xreadgroup("g1", "alice", {key: ">"}, count=120)
    c.xreadgroup("g1", "bob", {key: ">"}, count=30)
    c.xreadgroup("g2", "carol", {key: ">"}, count=400)
    c.xack(key, "g1", "5-2", "6-0")
    c.xdel(key, "7-1", "300-0", "301-1")


def parts_of(c: redis.Redis, key: str = "s") -> list[bytes]:
    """The source's chunks, cut from its DUMP (as the sender's stream is)."""
    stream = values.value_from_payload(c.dump(key))
    parts = list(chunks(stream, max_bytes=2000, max_pending=50))
    assert len(parts) > 5
    return parts


def stage(c: redis.Redis, parts: list[bytes], key: str = "t", ttl: int = 0) -> None:
    assert c.execute_command("TIDELOG.STAGE", "BEGIN", TOKEN, key, ttl, 60_000) in (b"OK", "OK", True)
    for part in parts:
        assert c.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, part) in (b"OK", "OK", True)


def full(port: int, key: str) -> bytes:
    raw = RawClient(port)
    try:
        return raw.call("XINFO", "STREAM", key, "FULL")
    finally:
        raw.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_asyncio_client_stages_and_commits(processes, tmp_path, protocol):
    import asyncio

    import redis.asyncio

    server = start(processes, tmp_path, "data")
    sync = redis.Redis(port=server.port, socket_timeout=30)
    fill(sync)
    parts = parts_of(sync)

    async def main() -> None:
        c = redis.asyncio.Redis(port=server.port, protocol=protocol, socket_timeout=30)
        try:
            assert await c.execute_command("TIDELOG.STAGE", "HELLO") == VERSION
            await c.execute_command("TIDELOG.STAGE", "BEGIN", TOKEN, "t", 5000, 60_000)
            for part in parts[:-1]:
                await c.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, part)
            assert await c.exists("t") == 0
            await c.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, parts[-1])
            assert 0 < await c.pttl("t") <= 5000
            assert await c.execute_command("TIDELOG.STAGE", "ABORT", TOKEN) == 0
        finally:
            await c.aclose()

    asyncio.run(main())
    assert full(server.port, "t") == full(server.port, "s")


# -- replication -----------------------------------------------------------------------
def test_a_tidelog_replica_stages_the_same_stream(processes, tmp_path):
    primary = start(processes, tmp_path, "primary")
    replica = start(processes, tmp_path, "replica", "--replicaof", "127.0.0.1", str(primary.port))
    p = redis.Redis(port=primary.port, socket_timeout=30)
    r = redis.Redis(port=replica.port, socket_timeout=30)
    wait_until(lambda: r.info("replication")["master_link_status"] == "up", timeout=LINK_TIMEOUT)
    assert p.execute_command("TIDELOG.STAGE", "HELLO") == VERSION
    fill(p)
    parts = parts_of(p)
    stage(p, parts[:-1])
    assert p.wait(1, 10_000) == 1
    assert r.exists("t") == 0 and r.dbsize() == 1
    assert p.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, parts[-1]) in (b"OK", "OK", True)
    assert p.wait(1, 10_000) == 1
    assert full(primary.port, "t") == full(primary.port, "s")
    assert full(replica.port, "t") == full(primary.port, "s")
    assert r.dump("t") == p.dump("s")


def test_a_redis_replica_makes_hello_answer_zero(processes, tmp_path):
    primary = start(processes, tmp_path, "primary")
    p = redis.Redis(port=primary.port, socket_timeout=30)
    fill(p)
    parts = parts_of(p)
    assert p.execute_command("TIDELOG.STAGE", "HELLO") == VERSION
    redis_replica = processes.redis("--replicaof", "127.0.0.1", str(primary.port))
    r = redis.Redis(port=redis_replica.port, socket_timeout=30)
    wait_until(lambda: r.info("replication")["master_link_status"] == "up", timeout=LINK_TIMEOUT)
    errors_before = r.info("errorstats")  # (its handshake's own, whatever they are)
    assert p.execute_command("TIDELOG.STAGE", "HELLO") == 0
    with pytest.raises(redis.ResponseError, match="staging is not available"):
        p.execute_command("TIDELOG.STAGE", "BEGIN", TOKEN, "t", 0, 60_000)
    with pytest.raises(redis.ResponseError, match="no such staged key"):
        p.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, parts[0])
    p.set("after", "1")
    assert p.wait(1, 10_000) == 1
    assert r.get("after") == b"1"
    assert r.info("errorstats") == errors_before  # nothing it was sent failed there
    assert r.xlen("s") == p.xlen("s")


def test_a_stage_open_when_a_replica_syncs_is_dropped(processes, tmp_path):
    primary = start(processes, tmp_path, "primary")
    p = redis.Redis(port=primary.port, socket_timeout=30)
    fill(p)
    parts = parts_of(p)
    stage(p, parts[:3])
    replica = start(processes, tmp_path, "replica", "--replicaof", "127.0.0.1", str(primary.port))
    r = redis.Redis(port=replica.port, socket_timeout=30)
    wait_until(lambda: r.info("replication")["master_link_status"] == "up", timeout=LINK_TIMEOUT)
    with pytest.raises(redis.ResponseError, match="no such staged key"):
        p.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, parts[3])
    assert p.exists("t") == 0 and r.exists("t") == 0


def test_a_chained_replica_syncs_only_once_the_stage_is_over(processes, tmp_path):
    primary = start(processes, tmp_path, "primary")
    middle = start(processes, tmp_path, "middle", "--replicaof", "127.0.0.1", str(primary.port))
    p = redis.Redis(port=primary.port, socket_timeout=30)
    m = redis.Redis(port=middle.port, socket_timeout=30)
    wait_until(lambda: m.info("replication")["master_link_status"] == "up", timeout=LINK_TIMEOUT)
    fill(p)
    parts = parts_of(p)
    stage(p, parts[:3])
    assert p.wait(1, 10_000) == 1
    # the middle replica holds a staged copy its primary goes on feeding: its
    # own replica is told to try later (it would miss the BEGIN otherwise)
    raw = RawClient(middle.port)
    try:
        assert raw.call("PSYNC", "?", "-1") == (
            b"-NOMASTERLINK Can't SYNC while a stream is being staged (TIDELOG.STAGE)\r\n")
    finally:
        raw.close()
    last = start(processes, tmp_path, "last", "--replicaof", "127.0.0.1", str(middle.port))
    r = redis.Redis(port=last.port, socket_timeout=30)
    assert r.info("replication")["master_link_status"] == "down"
    for part in parts[3:]:
        p.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, part)
    wait_until(lambda: r.info("replication")["master_link_status"] == "up", timeout=LINK_TIMEOUT)
    wait_until(lambda: r.exists("t") == 1, timeout=LINK_TIMEOUT)
    assert full(last.port, "t") == full(primary.port, "s")


# -- the AOF ------------------------------------------------------------------------------
def test_kill_mid_stage_leaves_no_key_and_kill_after_commit_keeps_it(processes, tmp_path):
    port = free_port()
    aof = ("--appendonly", "yes", "--appendfsync", "always")
    proc = start(processes, tmp_path, "data", *aof, port=port)
    c = redis.Redis(port=port, socket_timeout=30)
    fill(c)
    source = full(port, "s")  # (the AOF's rebuild of "s" may differ in consumer times)
    parts = parts_of(c)
    stage(c, parts[:-2])
    proc.sigkill()
    proc = start(processes, tmp_path, "data", *aof, port=port)
    c = redis.Redis(port=port, socket_timeout=30)
    assert c.exists("t") == 0 and c.dbsize() == 1
    assert "replied with an error" not in proc.stdout + proc.stderr
    with pytest.raises(redis.ResponseError, match="no such staged key"):
        c.execute_command("TIDELOG.STAGE", "APPEND", TOKEN, parts[-2])
    stage(c, parts, ttl=600_000)
    assert full(port, "t") == source
    proc.sigkill()
    proc = start(processes, tmp_path, "data", *aof, port=port)
    c = redis.Redis(port=port, socket_timeout=30)
    assert full(port, "t") == source
    assert 0 < c.pttl("t") <= 600_000
    assert "replied with an error" not in proc.stdout + proc.stderr
    # a rewrite while a copy is open keeps it: the move goes on after it
    c.delete("t")
    stage(c, parts[:3])
    c.bgrewriteaof()
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0, timeout=30)
    proc.sigkill()
    proc = start(processes, tmp_path, "data", *aof, port=port)
    c = redis.Redis(port=port, socket_timeout=30)
    assert c.exists("t") == 0  # the load ended by dropping it
    proc.terminate()


# -- cluster mode ---------------------------------------------------------------------------
def test_begin_is_redirected_unless_the_slot_is_served_or_imported(processes, tmp_path):
    require_cluster_mode()
    nodes = ClusterNodes(processes, tmp_path)
    a, b = nodes.tidelog(), nodes.tidelog()
    ca, cb = a.client(), b.client()
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
    cb.execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port)
    nodes.wait_agree(WAIT_S)
    key = next(f"k{i}" for i in range(1000) if key_slot(f"k{i}".encode()) >= 8192)
    slot = key_slot(key.encode())
    raw = RawClient(a.port)
    try:
        reply = raw.call("TIDELOG.STAGE", "BEGIN", TOKEN, key, 0, 60_000)
    finally:
        raw.close()
    assert reply == b"-MOVED %d 127.0.0.1:%d\r\n" % (slot, b.port)
    assert cb.execute_command("TIDELOG.STAGE", "BEGIN", TOKEN, key, 0, 60_000) in (b"OK", "OK", True)
    # importing: served without ASKING (as RESTORE-ASKING)
    ca.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", b.node_id())
    assert ca.execute_command("TIDELOG.STAGE", "BEGIN", TOKEN, key, 0, 60_000) in (b"OK", "OK", True)
