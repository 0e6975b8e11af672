"""Tidelog as a primary, with Debian's redis-server 7.0.15 as its replica.

Real processes: the replica does its own handshake, loads our snapshot,
applies our stream of effects and acknowledges offsets; the tests compare
what both servers answer, drop the link (partial resync), outrun the backlog
(full resync) and kill the primary with ``kill -9`` (every write WAIT
acknowledged is on the replica).
"""

from __future__ import annotations

import redis

from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until

LINK_TIMEOUT = 30.0


def start_primary(processes, tmp_path, *extra: str):
    port = free_port()
    data = tmp_path / f"primary-{port}"
    data.mkdir()
    return processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "", *extra],
                             port=port)


def start_replica(processes, primary_port: int):
    replica = processes.redis("--replicaof", "127.0.0.1", str(primary_port))
    client = redis.Redis(port=replica.port, decode_responses=True, socket_timeout=30)
    wait_until(lambda: client.info("replication")["master_link_status"] == "up",
               timeout=LINK_TIMEOUT)
    return replica, client


def stream_state(c: redis.Redis, key: str) -> dict:
    """What must be equal on primary and replica (times aside: seen-times
    and idle times are each server's own)."""
    groups = c.xinfo_groups(key)
    state = {"entries": c.xrange(key), "info": {k: v for k, v in c.xinfo_stream(key).items()
                                               if k not in ("first-entry", "last-entry")},
             "groups": groups}
    for g in groups:
        name = g["name"]
        pending = c.xpending_range(key, name, "-", "+", 1000)
        state[f"pel:{name}"] = [(p["message_id"], p["consumer"], p["times_delivered"])
                                for p in pending]
        state[f"consumers:{name}"] = sorted((x["name"], x["pending"])
                                            for x in c.xinfo_consumers(key, name))
    return state


def write_load(c: redis.Redis, rounds: int, tag: str) -> None:
    """XADD / XREADGROUP / XACK / XCLAIM / XGROUP on several keys, and the
    other types, so the stream carries every propagation form."""
    for i in range(rounds):
        for key in ("orders", "events", "audit"):
            c.xadd(key, {"n": i, "tag": tag})
            if i % 7 == 0:
                c.xadd(key, {"trimmed": i}, maxlen=500, approximate=True)
        if i % 10 == 0:
            for key in ("orders", "events"):
                got = c.xreadgroup("workers", f"c{i % 3}", {key: ">"}, count=5)
                ids = [eid for _, entries in got for eid, _ in entries]
                if ids:
                    c.xack(key, "workers", *ids[:2])
                    if ids[2:3]:
                        c.xclaim(key, "workers", "janitor", 0, ids[2:3])
        if i % 25 == 0:
            c.xgroup_createconsumer("audit", "readers", f"r{i}")
        c.hset(f"h:{tag}", str(i), i)
        c.incr(f"counter:{tag}")
        c.lpush(f"l:{tag}", i)
        c.zadd(f"z:{tag}", {str(i): i})
        c.sadd(f"s:{tag}", i)
    c.set(f"ttl:{tag}", "v", px=600_000)


def same_state(primary: redis.Redis, replica: redis.Redis) -> None:
    keys = sorted(primary.keys("*"))
    assert sorted(replica.keys("*")) == keys
    for key in keys:
        kind = primary.type(key)
        assert replica.type(key) == kind, key
        if kind == "stream":
            want, got = stream_state(primary, key), stream_state(replica, key)
            # XINFO fields newer than 7.0 (IDMP's, 8.6) are the primary's only.
            want["info"] = {k: v for k, v in want["info"].items() if k in got["info"]}
            for part in want:
                assert got[part] == want[part], (key, part)
        elif kind == "hash":
            assert replica.hgetall(key) == primary.hgetall(key)
        elif kind == "list":
            assert replica.lrange(key, 0, -1) == primary.lrange(key, 0, -1)
        elif kind == "zset":
            assert replica.zrange(key, 0, -1, withscores=True) == \
                primary.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            assert replica.smembers(key) == primary.smembers(key)
        else:
            assert replica.get(key) == primary.get(key)
        assert (replica.ttl(key) > 0) == (primary.ttl(key) > 0), key


def caught_up(primary: redis.Redis) -> bool:
    """WAIT from a connection that wrote last: the replica has it all."""
    primary.set("sync-marker", primary.info("replication")["master_repl_offset"])
    return primary.wait(1, 10_000) == 1


def setup_groups(c: redis.Redis) -> None:
    for key, group in (("orders", "workers"), ("events", "workers"), ("audit", "readers")):
        c.xgroup_create(key, group, id="0", mkstream=True)


def test_redis_replica_gets_the_snapshot_and_the_stream(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    write_load(primary, 60, "before")  # in the snapshot
    replica_srv, replica = start_replica(processes, primary_srv.port)
    write_load(primary, 60, "after")   # through the stream
    assert caught_up(primary)
    same_state(primary, replica)
    info = primary.info("replication")
    assert info["connected_slaves"] == 1
    assert info["slave0"]["port"] == replica_srv.port
    assert info["slave0"]["state"] == "online"
    role = primary.execute_command("ROLE")
    assert role[0] == "master" and role[2][0][1] == str(replica_srv.port)
    assert replica.info("replication")["master_repl_offset"] == info["master_repl_offset"]
    assert primary.info("stats")["sync_full"] == 1


def test_a_dropped_link_resumes_with_a_partial_resync(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    _, replica = start_replica(processes, primary_srv.port)
    write_load(primary, 20, "one")
    assert caught_up(primary)
    assert primary.client_kill_filter(_type="replica") == 1
    write_load(primary, 20, "two")  # while the replica reconnects
    wait_until(lambda: primary.info("replication")["connected_slaves"] == 1, timeout=LINK_TIMEOUT)
    assert caught_up(primary)
    same_state(primary, replica)
    stats = primary.info("stats")
    assert (stats["sync_full"], stats["sync_partial_ok"]) == (1, 1)
    assert "Partial resynchronization request from" in primary_srv.stdout + primary_srv.stderr


def test_an_outrun_backlog_means_a_full_resync(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path, "--repl-backlog-size", "16384")
    primary = primary_srv.client()
    setup_groups(primary)
    _, replica = start_replica(processes, primary_srv.port)
    assert caught_up(primary)
    # Drop the link and outrun the backlog in one pipeline: the primary reads
    # it in one go, so the replica cannot come back in between.
    pipe = primary.pipeline(transaction=False)
    pipe.client_kill_filter(_type="replica")
    pipe.set("big", "x" * 50_000)
    assert pipe.execute() == [1, True]
    write_load(primary, 10, "gap")
    wait_until(lambda: primary.info("replication")["connected_slaves"] == 1, timeout=LINK_TIMEOUT)
    assert caught_up(primary)
    same_state(primary, replica)
    stats = primary.info("stats")
    assert (stats["sync_full"], stats["sync_partial_err"]) == (2, 1)
    assert "for lack of backlog" in primary_srv.stdout + primary_srv.stderr


def test_writes_acknowledged_by_wait_survive_the_primary_kill(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    _, replica = start_replica(processes, primary_srv.port)
    acked = []
    for i in range(200):
        entry_id = primary.xadd("ledger", {"n": i})
        if i % 10 == 9:
            assert primary.wait(1, 10_000) == 1
            acked.append(entry_id)
    primary_srv.sigkill()
    wait_until(lambda: replica.info("replication")["master_link_status"] == "down",
               timeout=LINK_TIMEOUT)
    on_replica = {eid for eid, _ in replica.xrange("ledger")}
    assert set(acked) <= on_replica
    assert len(on_replica) >= 10 * len(acked)


def test_wait_without_replicas_times_out_with_zero(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    c = primary_srv.client()
    c.set("k", "v")
    assert c.wait(0, 0) == 0
    assert c.wait(1, 50) == 0
    pipe = c.pipeline(transaction=True)
    pipe.set("k", "w")
    pipe.execute_command("WAIT", 1, 0)  # inside EXEC: the count at once
    assert pipe.execute() == [True, 0]
