"""Tidelog as a primary, with Debian's redis-server 7.0.15 as its replica.

Real processes: the replica does its own handshake, loads our snapshot,
applies our stream of effects and acknowledges offsets; the tests compare
what both servers answer, drop the link (partial resync), outrun the backlog
(full resync) and kill the primary with ``kill -9`` (every write WAIT
acknowledged is on the replica).
"""

from __future__ import annotations

import pytest
import redis

from tests.support.redis_oracle import free_port
from tests.support.waits import wait_until

LINK_TIMEOUT = 30.0


def start_primary(processes, tmp_path, *extra: str, password: str | None = None):
    port = free_port()
    data = tmp_path / f"primary-{port}"
    data.mkdir()
    return processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "", *extra],
                             port=port, password=password)


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
    # iids-duplicates counts the retries the primary answered without adding:
    # they propagate nothing, so it is the primary's own (as in Redis 8.6).
    state = {"entries": c.xrange(key), "info": {k: v for k, v in c.xinfo_stream(key).items()
                                               if k not in ("first-entry", "last-entry",
                                                            "iids-duplicates")},
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
    # Drop the link and outrun the backlog in one transaction: redis-py sends
    # a long value in a write of its own, and a replica reconnects at once
    # (as Redis 7.0 does), so only EXEC keeps it from coming back in between.
    pipe = primary.pipeline(transaction=True)
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


@pytest.mark.parametrize("kind", ["redis", "tidelog"])
def test_writes_acknowledged_by_wait_survive_the_primary_kill(processes, tmp_path, kind) -> None:
    """kill -9 of the primary: every write WAIT 1 acknowledged is on the
    replica, redis-server 7.0.15 or Tidelog."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    if kind == "redis":
        _, replica = start_replica(processes, primary_srv.port)
    else:
        _, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
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


# -- Tidelog as a replica ------------------------------------------------------------------

def start_tidelog_replica(processes, tmp_path, primary_port: int, *extra: str, port=None,
                          data=None):
    port = port or free_port()
    if data is None:
        data = tmp_path / f"replica-{port}"
        data.mkdir()
    srv = processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                             "--replicaof", "127.0.0.1", str(primary_port), *extra], port=port)
    client = srv.client()
    wait_until(lambda: client.info("replication")["master_link_status"] == "up",
               timeout=LINK_TIMEOUT)
    return srv, client


def log_of(srv) -> str:
    return srv.stdout + srv.stderr


def test_tidelog_replica_of_tidelog_under_load(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    write_load(primary, 40, "before")
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    write_load(primary, 40, "after")
    assert caught_up(primary)
    same_state(primary, replica)
    for key in ("orders", "events", "audit"):  # every field of XINFO STREAM FULL but times
        want, got = primary.xinfo_stream(key, full=True), replica.xinfo_stream(key, full=True)
        for group in (*want["groups"], *got["groups"]):
            for consumer in group["consumers"]:
                consumer.pop("seen-time"), consumer.pop("active-time", None)
        assert got == want
    info = replica.info("replication")
    assert info["role"] == "slave" and info["slave_read_only"] == 1
    assert info["slave_repl_offset"] == primary.info("replication")["master_repl_offset"]
    assert replica.execute_command("ROLE")[:4] == ["slave", "127.0.0.1", primary_srv.port,
                                                   "connected"]
    with pytest.raises(redis.ReadOnlyError):
        replica.xadd("orders", {"n": "local"})
    assert "MASTER <-> REPLICA sync: Finished with success" in log_of(replica_srv)


def test_a_restarted_replica_continues_from_its_snapshot(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    write_load(primary, 20, "one")
    assert caught_up(primary)
    assert replica.save()                    # the snapshot records where the stream stood
    write_load(primary, 20, "two")
    replica_srv.sigkill()                    # kill -9 mid-load
    write_load(primary, 20, "three")
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port,
                                                 port=replica_srv.port,
                                                 data=tmp_path / f"replica-{replica_srv.port}")
    assert caught_up(primary)
    same_state(primary, replica)
    stats = primary.info("stats")
    assert (stats["sync_full"], stats["sync_partial_ok"]) == (1, 1)
    assert "Successful partial resynchronization with master." in log_of(replica_srv)


def test_a_restarted_replica_that_fell_too_far_behind_syncs_in_full(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path, "--repl-backlog-size", "16384")
    primary = primary_srv.client()
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary.set("a", "1")
    assert caught_up(primary)
    assert replica.save()
    replica_srv.sigkill()
    primary.set("big", "x" * 50_000)         # more than the backlog holds
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port,
                                                 port=replica_srv.port,
                                                 data=tmp_path / f"replica-{replica_srv.port}")
    assert caught_up(primary)
    same_state(primary, replica)
    stats = primary.info("stats")
    assert (stats["sync_full"], stats["sync_partial_err"]) == (2, 1)


def test_tidelog_replica_of_redis(processes, tmp_path) -> None:
    """Tidelog follows redis-server 7.0.15: the snapshot comes as $EOF:
    (diskless, Redis 7's default), the stream in 7.0's forms."""
    primary_srv = processes.redis("--repl-diskless-sync-delay", "0")
    primary = redis.Redis(port=primary_srv.port, decode_responses=True, socket_timeout=30)
    setup_groups(primary)
    write_load(primary, 30, "before")
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    write_load(primary, 30, "after")
    assert caught_up(primary)
    # Redis 7.0 propagates XREADGROUP without its entries-read (fixed in 7.2):
    # compare what 7.0's stream carries.
    for key in primary.keys("*"):
        if primary.type(key) == "stream":
            assert replica.xrange(key) == primary.xrange(key)
            pel = [(p["message_id"], p["consumer"], p["times_delivered"])
                   for p in primary.xpending_range(key, "workers" if key != "audit" else "readers",
                                                   "-", "+", 1000)]
            assert pel == [(p["message_id"], p["consumer"], p["times_delivered"])
                           for p in replica.xpending_range(
                               key, "workers" if key != "audit" else "readers", "-", "+", 1000)]
        else:
            assert replica.type(key) == primary.type(key)
    assert "receiving streamed RDB from master with EOF" in log_of(replica_srv)


def test_promotion_keeps_the_history_for_a_sibling(processes, tmp_path) -> None:
    """A failover by hand: the replica is promoted (REPLICAOF NO ONE), the
    other replica follows it and continues with a partial resync through
    the promoted one's previous replication ID."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    a_srv, a = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    b_srv, b = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    write_load(primary, 20, "one")
    primary.set("marker", "x")
    assert primary.wait(2, 10_000) == 2
    old_id = primary.info("replication")["master_replid"]
    primary_srv.sigkill()
    assert a.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    info = a.info("replication")
    assert info["role"] == "master" and info["master_replid2"] == old_id
    assert b.execute_command("REPLICAOF", "127.0.0.1", a_srv.port) == "OK"
    wait_until(lambda: b.info("replication")["master_link_status"] == "up", timeout=LINK_TIMEOUT)
    write_load(a, 20, "two")
    assert caught_up(a)
    same_state(a, b)
    assert a.info("stats")["sync_partial_ok"] == 1
    assert "Successful partial resynchronization with master." in log_of(b_srv)


def test_a_chain_of_replicas(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    mid_srv, mid = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    _, end = start_tidelog_replica(processes, tmp_path, mid_srv.port)
    write_load(primary, 30, "chain")
    assert caught_up(primary)
    offset = primary.info("replication")["master_repl_offset"]
    wait_until(lambda: end.info("replication")["slave_repl_offset"] == offset,
               timeout=LINK_TIMEOUT)
    same_state(primary, end)
    assert end.info("replication")["master_replid"] == primary.info("replication")["master_replid"]


def redis8_stream_load(c: redis.Redis) -> None:
    """The 8.x stream commands whose effects a 7.0 replica gets rewritten:
    XACKDEL and XDELEX with each policy, XADD with IDMP / IDMPAUTO and
    KEEPREF, XTRIM KEEPREF."""
    c.xgroup_create("jobs", "a", id="0", mkstream=True)
    c.xgroup_create("jobs", "b", id="0")
    ids = [c.xadd("jobs", {"n": i}) for i in range(30)]
    c.xreadgroup("a", "w1", {"jobs": ">"}, count=20)
    c.xreadgroup("b", "w2", {"jobs": ">"}, count=10)
    c.execute_command("XACKDEL", "jobs", "a", "KEEPREF", "IDS", 2, ids[0], ids[1])
    c.execute_command("XACKDEL", "jobs", "a", "DELREF", "IDS", 2, ids[2], ids[3])
    c.execute_command("XACKDEL", "jobs", "a", "ACKED", "IDS", 3, ids[4], ids[12], "9-9")
    c.execute_command("XDELEX", "jobs", "IDS", 1, ids[5])
    c.execute_command("XDELEX", "jobs", "DELREF", "IDS", 2, ids[6], ids[25])
    c.execute_command("XDELEX", "jobs", "ACKED", "IDS", 2, ids[7], ids[26])
    c.execute_command("XADD", "jobs", "KEEPREF", "MAXLEN", "=", "40", "*", "k", "v")
    c.execute_command("XADD", "jobs", "IDMP", "p1", "i1", "*", "idmp", "1")
    c.execute_command("XADD", "jobs", "IDMP", "p1", "i1", "*", "idmp", "1")  # a retry
    c.execute_command("XADD", "jobs", "IDMPAUTO", "p2", "*", "auto", "1")
    c.execute_command("XTRIM", "jobs", "MAXLEN", "=", "35", "KEEPREF")


def test_redis8_stream_effects_reach_a_redis7_replica(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    _, redis_replica = start_replica(processes, primary_srv.port)
    _, tidelog_replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    redis8_stream_load(primary)
    assert caught_up(primary) and primary.wait(2, 10_000) == 2
    same_state(primary, redis_replica)
    same_state(primary, tidelog_replica)
    # The IDMP state reached the Tidelog replica (XIDMPRECORD, which Redis skips).
    info = tidelog_replica.xinfo_stream("jobs")
    assert (info["iids-added"], info["pids-tracked"]) == (2, 2)
    log = log_of(primary_srv)
    assert log.count("XIDMPRECORD has no Redis 7.0 form") == 1


def test_messages_published_on_the_primary_reach_subscribers_of_replicas(processes,
                                                                         tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    _, redis_replica = start_replica(processes, primary_srv.port)
    _, tidelog_replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    subscribers = []
    for replica in (redis_replica, tidelog_replica):
        p = replica.pubsub()
        p.subscribe("news")
        assert p.get_message(timeout=10)["type"] == "subscribe"
        subscribers.append(p)
    assert primary.publish("news", "hello") == 0  # nobody subscribes on the primary
    for p in subscribers:
        message = p.get_message(timeout=10)
        assert (message["channel"], message["data"]) == ("news", "hello")
        p.close()


def test_waitaof_counts_local_and_replica_fsyncs(processes, tmp_path) -> None:
    """WAITAOF (Redis 7.2, https://redis.io/docs/latest/commands/waitaof/):
    the local AOF's fsync and each replica's (REPLCONF ACK ... FACK)."""
    primary_srv = start_primary(processes, tmp_path, "--appendonly", "yes")
    primary = primary_srv.client()
    primary.set("before", "sync")           # reaches the replica in the full sync
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port,
                                                 "--appendonly", "yes")
    primary.xadd("ledger", {"n": 1})
    assert primary.execute_command("WAITAOF", 1, 1, 10_000) == [1, 1]
    assert primary.execute_command("WAITAOF", 0, 0, 0) == [1, 1]
    with pytest.raises(redis.ResponseError, match="WAITAOF cannot be used with replica"):
        replica.execute_command("WAITAOF", 0, 0, 0)
    # The replica's AOF holds what the full sync loaded: it restarts from it alone.
    primary.set("after", "sync")
    assert primary.execute_command("WAITAOF", 1, 1, 10_000) == [1, 1]
    wait_until(lambda: replica.info("persistence")["aof_rewrite_in_progress"] == 0)
    replica_srv.sigkill()
    data = tmp_path / f"replica-{replica_srv.port}"
    port = free_port()
    alone = processes.tidelog(["--port", str(port), "--dir", str(data), "--appendonly", "yes",
                               "--save", ""], port=port).client()
    assert alone.xrange("ledger") == primary.xrange("ledger")
    assert (alone.get("before"), alone.get("after")) == ("sync", "sync")


def test_waitaof_without_an_aof(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    _, redis_replica = start_replica(processes, primary_srv.port)  # 7.0: no FACK
    primary.set("k", "v")
    with pytest.raises(redis.ResponseError, match="numlocal is set but appendonly is disabled"):
        primary.execute_command("WAITAOF", 1, 0, 0)
    assert primary.execute_command("WAITAOF", 0, 1, 100) == [0, 0]
    assert primary.execute_command("WAITAOF", 0, 0, 0) == [0, 0]
    for argv, error in ((("WAITAOF", -1, 0, 0), "must be positive"),
                        (("WAITAOF", 0, "x", 0), "must be positive"),
                        (("WAITAOF", 0, 0, -1), "timeout is negative")):
        with pytest.raises(redis.ResponseError, match=error):
            primary.execute_command(*argv)


def test_replicas_authenticate_with_masterauth(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path, "--requirepass", "pw", password="pw")
    primary = primary_srv.client()
    primary.xadd("s", {"n": "1"}, id="1-1")
    replica = processes.redis("--replicaof", "127.0.0.1", str(primary_srv.port),
                              "--masterauth", "pw")
    redis_replica = redis.Redis(port=replica.port, decode_responses=True, socket_timeout=30)
    _, tidelog_replica = start_tidelog_replica(processes, tmp_path, primary_srv.port,
                                               "--masterauth", "pw")
    wait_until(lambda: redis_replica.info("replication")["master_link_status"] == "up",
               timeout=LINK_TIMEOUT)
    primary.xadd("s", {"n": "2"}, id="2-1")
    assert primary.wait(2, 10_000) == 2
    assert redis_replica.xrange("s") == tidelog_replica.xrange("s") == primary.xrange("s")
    # Without the password a replica gets nowhere, and says why.
    port = free_port()
    data = tmp_path / "no-auth"
    data.mkdir()
    stranger = processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                                  "--replicaof", "127.0.0.1", str(primary_srv.port)], port=port)
    wait_until(lambda: "NOAUTH" in stranger.stdout + stranger.stderr, timeout=LINK_TIMEOUT)
    assert stranger.client().info("replication")["master_link_status"] == "down"


LIBRARY = """#!lua name=ledger
redis.register_function('record', function(keys, args)
  return redis.call('XADD', keys[1], '*', 'amount', args[1])
end)"""


def test_function_libraries_reach_replicas(processes, tmp_path) -> None:
    """In the full sync's snapshot (loaded before the replica connects) and
    through the stream (FUNCTION LOAD after), for both kinds of replica."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    primary.function_load(LIBRARY)
    _, redis_replica = start_replica(processes, primary_srv.port)
    _, tidelog_replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary.function_load(LIBRARY.replace("ledger", "journal").replace("'record'", "'note'"))
    primary.fcall("record", 1, "s", "10")
    assert primary.wait(2, 10_000) == 2
    for replica in (redis_replica, tidelog_replica):
        names = sorted(dict(zip(lib[::2], lib[1::2]))["library_name"]
                       for lib in replica.function_list())
        assert names == ["journal", "ledger"]
        assert replica.xrange("s") == primary.xrange("s")


def bitmap_load(c: redis.Redis) -> None:
    """Every bit write as Redis propagates it (argv as sent; nothing for a
    SETBIT or BITFIELD that changes nothing, or a BITFIELD of GETs)."""
    c.setbit("b:set", 100, 1)
    c.setbit("b:set", 3, 1)
    c.setbit("b:set", 3, 1)
    c.set("b:ttl", "abc", px=600_000)
    c.setbit("b:ttl", 30, 1)
    c.bitfield("b:field").set("i5", 3, -7).overflow("SAT").incrby("u4", 20, 99).get("u8", 0).execute()
    c.bitfield("b:field").get("u8", 0).execute()
    c.bitfield("b:fail").overflow("FAIL").set("u2", 40, 9).execute()  # refused, "b:fail" made
    c.set("b:x", b"\xf0\x0f")
    c.set("b:y", b"\xff")
    for op in ("AND", "OR", "XOR"):
        c.bitop(op, f"b:{op}", "b:x", "b:y", "b:set")
    c.bitop("NOT", "b:NOT", "b:x")
    c.set("b:gone", "v")
    c.bitop("AND", "b:gone", "nope")


def test_bitmap_writes_reach_replicas(processes, tmp_path) -> None:
    """A Redis 7.0 replica and a Tidelog one end with the primary's strings;
    BITOP's Redis 8.2 operations reach the Tidelog replica (7.0 has none)."""
    primary_srv = start_primary(processes, tmp_path)
    replica_srv, _ = start_replica(processes, primary_srv.port)
    tidelog_srv, _ = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary = redis.Redis(port=primary_srv.port)
    bitmap_load(primary)
    for op in ("DIFF", "DIFF1", "ANDOR", "ONE"):
        primary.bitop(op, f"new:{op}", "b:x", "b:y", "b:set")
    primary.set("sync-marker", 1)
    assert primary.wait(2, 10_000) == 2
    keys = sorted(primary.keys("*"))
    assert b"b:fail" in keys and b"b:gone" not in keys
    for port, only_70 in ((replica_srv.port, True), (tidelog_srv.port, False)):
        with redis.Redis(port=port) as replica:
            want = [k for k in keys if not (only_70 and k.startswith(b"new:"))]
            assert sorted(k for k in replica.keys("*") if not k.startswith(b"new:")) == \
                [k for k in want if not k.startswith(b"new:")]
            for key in want:
                assert replica.get(key) == primary.get(key), key
                assert (replica.ttl(key) > 0) == (primary.ttl(key) > 0), key
    assert log_of(primary_srv).count("BITOP DIFF1 has no Redis 7.0 form") == 1


def test_hyperloglog_strings_reach_a_redis_replica_byte_for_byte(processes, tmp_path) -> None:
    """HLLs in the snapshot and through the stream: PFADD, PFMERGE (sparse
    and dense), PFCOUNT storing its count, PFDEBUG TODENSE; the replica's
    strings equal the primary's byte for byte and count the same."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    primary.pfadd("before", *[f"b{i}" for i in range(500)])
    assert primary.pfcount("before") > 0
    replica_srv, _ = start_replica(processes, primary_srv.port)
    replica = redis.Redis(port=replica_srv.port, socket_timeout=30)
    raw = redis.Redis(port=primary_srv.port)
    raw.pfadd("small", "a", "b", "c")
    raw.pfadd("big", *[f"x{i}" for i in range(5000)])
    raw.pfcount("small")                      # stores the count: propagated
    raw.pfcount("small", "big")               # stores nothing
    raw.pfmerge("merged", "small", "before")  # sparse
    raw.pfmerge("dense", "small", "big")      # dense
    for client in (raw, replica):               # each applies its own limit
        client.config_set("hll-sparse-max-bytes", "20")
    raw.pfadd("small", "d", "e", "f", "g")     # promoted on both
    raw.execute_command("PFDEBUG", "TODENSE", "before")
    raw.pfcount("dense")
    assert caught_up(primary)
    for key in ("before", "small", "big", "merged", "dense"):
        assert replica.get(key) == raw.get(key), key
    assert raw.get("small")[4] == raw.get("before")[4] == 0    # dense
    assert replica.pfcount("small", "big", "merged") == raw.pfcount("small", "big", "merged")
    raw.close()
    replica.close()


def test_pfcount_on_a_tidelog_replica_keeps_the_offsets(processes, tmp_path) -> None:
    """PFCOUNT run on a replica stores the fresh count in its own copy (as
    Redis's replica does) and sends nothing anywhere: the replica's offset
    stays the primary's, and later writes still arrive."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary.pfadd("h", "a", "b", "c")
    assert caught_up(primary)
    assert replica.pfcount("h") == 3
    assert replica.pfcount("h") == 3
    primary.pfadd("h", "d")
    assert caught_up(primary)
    assert replica.pfcount("h") == 4
    assert primary.pfcount("h") == 4
    assert caught_up(primary)
    with redis.Redis(port=primary_srv.port) as p, redis.Redis(port=replica_srv.port) as r:
        assert r.get("h") == p.get("h")
    assert replica.info("replication")["slave_repl_offset"] == \
        primary.info("replication")["master_repl_offset"]
    assert "internal error" not in log_of(replica_srv)
