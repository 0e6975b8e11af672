"""FAILOVER (https://redis.io/commands/failover) between real processes:
Tidelog primary and Tidelog replica, Tidelog primary and redis-server 7.0.15
replica, and redis-server 7.0.15 primary handing over to a Tidelog replica.

After the failover the roles are swapped, everything written before is on
the new primary, and writes there replicate back to the old one (its
replica now, continuing with a partial resync).
"""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest
import redis
import redis.asyncio

from tests.integration.test_replication import (
    LINK_TIMEOUT,
    log_of,
    same_state,
    setup_groups,
    start_primary,
    start_tidelog_replica,
    write_load,
)
from tests.support.waits import wait_until


def failover_state(c: redis.Redis) -> str:
    return c.info("replication")["master_failover_state"]


def settled(old: redis.Redis, new: redis.Redis) -> bool:
    """The old primary follows the new one, with the link up."""
    info = old.info("replication")
    return (info["role"] == "slave" and info["master_link_status"] == "up"
            and info["master_failover_state"] == "no-failover"
            and new.info("replication")["role"] == "master")


def test_tidelog_to_tidelog(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    write_load(primary, 30, "before")
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    write_load(primary, 10, "during")
    old_id = primary.info("replication")["master_replid"]

    assert primary.execute_command("FAILOVER", "TO", "127.0.0.1", replica_srv.port) == "OK"
    assert failover_state(primary) in ("waiting-for-sync", "failover-in-progress",
                                       "no-failover")
    wait_until(lambda: settled(primary, replica), timeout=LINK_TIMEOUT)

    info = replica.info("replication")
    assert info["role"] == "master" and info["master_replid2"] == old_id
    assert primary.info("replication")["master_port"] == replica_srv.port
    same_state(replica, primary)  # every write made before survived
    write_load(replica, 10, "after")  # the new primary's writes come back
    replica.set("marker", "m")
    assert replica.wait(1, 10_000) == 1
    same_state(replica, primary)
    with pytest.raises(redis.ReadOnlyError):
        primary.set("x", "1")
    assert replica.info("stats")["sync_partial_ok"] == 1  # no second full sync
    assert "MASTER MODE enabled (failover request from" in log_of(replica_srv)
    assert "Failover target 127.0.0.1:%d is synced, failing over." % replica_srv.port \
        in log_of(primary_srv)


def test_failover_to_any_replica_holds_writes_until_done(processes, tmp_path) -> None:
    """No TO: the first replica caught up is chosen.  A write sent while the
    failover runs is held back, then refused (-READONLY): it is never
    acknowledged and lost."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary.set("k", "before")
    primary.execute_command("CLIENT", "PAUSE", "300000", "WRITE")  # keeps it waiting
    assert primary.execute_command("FAILOVER") == "OK"
    assert failover_state(primary) == "waiting-for-sync"
    result: list[object] = []
    writer = primary_srv.client()

    def write() -> None:
        try:
            result.append(writer.set("k", "held"))
        except redis.ResponseError as exc:
            result.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    with pytest.raises(redis.ResponseError, match="^FAILOVER already in progress.$"):
        primary.execute_command("FAILOVER")
    with pytest.raises(redis.ResponseError, match="^REPLICAOF not allowed while failing over.$"):
        primary.execute_command("REPLICAOF", "NO", "ONE")
    wait_until(lambda: settled(primary, replica), timeout=LINK_TIMEOUT)
    thread.join(30)
    assert len(result) == 1 and isinstance(result[0], redis.ReadOnlyError)
    assert replica.get("k") == "before" and primary.get("k") == "before"


def test_abort_and_timeout(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    # The replica stops acknowledging: its link is kept but it is frozen.
    replica_srv.proc.send_signal(signal.SIGSTOP)
    try:
        primary.set("k", "v")  # an offset the replica cannot have acknowledged
        assert primary.execute_command("FAILOVER") == "OK"
        assert failover_state(primary) == "waiting-for-sync"
        with pytest.raises(redis.ResponseError, match="^syntax error$"):  # ABORT stands alone
            primary.execute_command("FAILOVER", "ABORT", "TIMEOUT", "5")
        with pytest.raises(redis.ResponseError, match="^FAILOVER already in progress.$"):
            primary.execute_command("FAILOVER", "TIMEOUT", "5")
        assert primary.execute_command("FAILOVER", "ABORT") == "OK"
        assert failover_state(primary) == "no-failover"
        assert primary.set("k", "writable again")
        with pytest.raises(redis.ResponseError, match="^No failover in progress.$"):
            primary.execute_command("FAILOVER", "ABORT")
        assert primary.execute_command("FAILOVER", "TIMEOUT", "200") == "OK"
        wait_until(lambda: failover_state(primary) == "no-failover", timeout=LINK_TIMEOUT)
        assert primary.info("replication")["role"] == "master"
        assert "aborted: Replica never caught up before timeout" in log_of(primary_srv)
        assert primary.set("k", "still a primary")
    finally:
        replica_srv.proc.send_signal(signal.SIGCONT)


def test_force_fails_over_to_a_lagging_target(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary.set("k", "v")
    assert primary.wait(1, 10_000) == 1
    replica_srv.proc.send_signal(signal.SIGSTOP)
    try:
        primary.set("late", "1")
        assert primary.execute_command("FAILOVER", "TO", "127.0.0.1", replica_srv.port,
                                       "TIMEOUT", "300", "FORCE") == "OK"
        wait_until(lambda: failover_state(primary) == "failover-in-progress",
                   timeout=LINK_TIMEOUT)
    finally:
        replica_srv.proc.send_signal(signal.SIGCONT)
    wait_until(lambda: settled(primary, replica), timeout=LINK_TIMEOUT)
    assert replica.get("k") == "v"
    assert "time out exceeded, failing over." in log_of(primary_srv)


def test_errors_from_redis_py(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    with pytest.raises(redis.ResponseError, match="^FAILOVER requires connected replicas.$"):
        primary.execute_command("FAILOVER")
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    for argv, error in (
            (("FAILOVER", "TO", "127.0.0.1", "1"), "FAILOVER target HOST and PORT is not a replica."),
            (("FAILOVER", "FORCE"), "FAILOVER with force option requires both a timeout and "
                                    "target HOST and IP."),
            (("FAILOVER", "TIMEOUT", "0"), "FAILOVER timeout must be greater than 0"),
            (("FAILOVER", "TO", "h"), "syntax error"),
            (("FAILOVER", "ABORT"), "No failover in progress.")):
        with pytest.raises(redis.ResponseError) as info:
            primary.execute_command(*argv)
        assert str(info.value) == error, argv
    with pytest.raises(redis.ResponseError, match="^FAILOVER is not valid when server is a replica.$"):
        replica.execute_command("FAILOVER")
    assert failover_state(primary) == "no-failover"


# -- with redis-server 7.0.15 --------------------------------------------------------------

def test_tidelog_primary_hands_over_to_a_redis_replica(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    setup_groups(primary)
    write_load(primary, 20, "before")
    redis_srv = processes.redis("--replicaof", "127.0.0.1", str(primary_srv.port))
    theirs = redis.Redis(port=redis_srv.port, decode_responses=True, socket_timeout=30)
    wait_until(lambda: theirs.info("replication")["master_link_status"] == "up",
               timeout=LINK_TIMEOUT)
    write_load(primary, 10, "during")
    assert primary.execute_command("FAILOVER", "TO", "127.0.0.1", redis_srv.port,
                                   "TIMEOUT", "20000") == "OK"
    wait_until(lambda: settled(primary, theirs), timeout=LINK_TIMEOUT)
    # (Tidelog's side first: its XINFO STREAM has 8.6's fields, which 7.0 lacks.)
    same_state(primary, theirs)
    theirs.set("from-redis", "1")
    for i in range(20):  # (7.0 propagates XREADGROUP without entries-read: none here)
        theirs.xadd("orders", {"n": i, "tag": "after"})
        theirs.hset("h:after", str(i), i)
        theirs.incr("counter:after")
    assert theirs.wait(1, 10_000) == 1
    same_state(primary, theirs)
    assert theirs.info("stats")["sync_partial_ok"] == 1


def test_redis_primary_hands_over_to_a_tidelog_replica(processes, tmp_path) -> None:
    redis_srv = processes.redis("--repl-diskless-sync-delay", "0")
    theirs = redis.Redis(port=redis_srv.port, decode_responses=True, socket_timeout=30)
    theirs.set("k", "from redis")
    theirs.rpush("l", "a", "b")
    replica_srv, replica = start_tidelog_replica(processes, tmp_path, redis_srv.port)
    theirs.hset("h", "f", "v")
    # Redis counts a replica online once its first REPLCONF ACK came after the
    # sync (the replica's link is up before that); FAILOVER TO wants it online.
    wait_until(lambda: theirs.info("replication").get("slave0", {}).get("state") == "online",
               timeout=LINK_TIMEOUT)
    assert theirs.execute_command("FAILOVER", "TO", "127.0.0.1", replica_srv.port) == "OK"
    wait_until(lambda: settled(theirs, replica), timeout=LINK_TIMEOUT)
    assert replica.get("k") == "from redis" and replica.hgetall("h") == {"f": "v"}
    replica.set("back", "to redis")
    assert replica.wait(1, 10_000) == 1
    assert theirs.get("back") == "to redis"
    assert "MASTER MODE enabled (failover request from" in log_of(replica_srv)


def test_a_second_replica_follows_through_the_old_primary(processes, tmp_path) -> None:
    """P with replicas A and B; FAILOVER TO A: P follows A and B still
    follows P (a chain, as with Redis), so A's writes reach both."""
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    a_srv, a = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    b_srv, b = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    primary.set("before", "1")
    assert primary.wait(2, 10_000) == 2
    assert primary.execute_command("FAILOVER", "TO", "127.0.0.1", a_srv.port) == "OK"
    wait_until(lambda: settled(primary, a), timeout=LINK_TIMEOUT)
    assert b.info("replication")["master_port"] == primary_srv.port
    a.set("after", "2")
    assert a.wait(1, 10_000) == 1
    wait_until(lambda: b.get("after") == "2", timeout=LINK_TIMEOUT)
    assert b.get("before") == "1" and primary.get("after") == "2"


def test_asyncio_resp3_client_sees_the_state(processes, tmp_path) -> None:
    primary_srv = start_primary(processes, tmp_path)

    async def run() -> None:
        c = redis.asyncio.Redis(port=primary_srv.port, protocol=3, decode_responses=True)
        try:
            with pytest.raises(redis.ResponseError, match="requires connected replicas"):
                await c.execute_command("FAILOVER")
            info = await c.info("replication")
            assert info["master_failover_state"] == "no-failover"
        finally:
            await c.aclose()

    asyncio.run(run())
