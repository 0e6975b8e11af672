"""Automatic failover with the real Sentinel: three Sentinels (Debian's
redis-sentinel, or redis-server in sentinel mode) watch a Tidelog primary with two Tidelog
replicas; the primary is killed with ``kill -9`` while a redis-py
``Sentinel`` client writes; Sentinel promotes a replica and repoints the
other, the client carries on against the new primary, and every write that
``WAIT 2`` acknowledged is there."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
import redis
from redis.sentinel import Sentinel

from tests.support.redis_oracle import REDIS_SERVER, free_port
from tests.support.waits import wait_until

SENTINEL = shutil.which("redis-sentinel")
pytestmark = pytest.mark.skipif(REDIS_SERVER is None and SENTINEL is None,
                                reason="neither redis-sentinel nor redis-server is installed")

FAILOVER_TIMEOUT = 60.0


def start_sentinels(processes, tmp_path, primary_port: int) -> list[int]:
    ports = []
    for i in range(3):
        port = free_port()
        work = tmp_path / f"sentinel-{i}"
        work.mkdir()
        conf = work / "sentinel.conf"
        conf.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {work}\n"
            f"sentinel monitor mymaster 127.0.0.1 {primary_port} 2\n"
            "sentinel down-after-milliseconds mymaster 1000\n"
            "sentinel failover-timeout mymaster 10000\n"
            "sentinel parallel-syncs mymaster 1\n")
        log = open(work / "sentinel.log", "wb")
        argv = [SENTINEL, str(conf)] if SENTINEL else [REDIS_SERVER, str(conf), "--sentinel"]
        processes.popen(argv, stdout=log,
                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        ports.append(port)
    return ports


def sentinel_sees(port: int, replicas: int, sentinels: int) -> bool:
    try:
        with redis.Redis(port=port, decode_responses=True, socket_timeout=5) as s:
            return (len(s.sentinel_slaves("mymaster")) == replicas
                    and len(s.sentinel_sentinels("mymaster")) == sentinels)
    except redis.RedisError:
        return False


def start_tidelog(processes, tmp_path, *extra: str):
    port = free_port()
    data = tmp_path / f"tidelog-{port}"
    data.mkdir()
    return processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "", *extra],
                             port=port)


def test_sentinel_fails_over_a_killed_primary(processes, tmp_path) -> None:
    primary_srv = start_tidelog(processes, tmp_path)
    replicas = [start_tidelog(processes, tmp_path, "--replicaof", "127.0.0.1",
                              str(primary_srv.port)) for _ in range(2)]
    for r in replicas:
        client = r.client()
        wait_until(lambda c=client: c.info("replication")["master_link_status"] == "up",
                   timeout=30)
    ports = start_sentinels(processes, tmp_path, primary_srv.port)
    for port in ports:
        wait_until(lambda p=port: sentinel_sees(p, replicas=2, sentinels=2), timeout=60)

    sentinel = Sentinel([("127.0.0.1", p) for p in ports], socket_timeout=5)
    master = sentinel.master_for("mymaster", socket_timeout=5, decode_responses=True)
    acked: list[str] = []

    def write(i: int, replicas: int) -> None:
        entry_id = master.xadd("orders", {"n": i})
        if master.wait(replicas, 5000) == replicas:
            acked.append(entry_id)

    for i in range(100):
        write(i, 2)
    assert len(acked) == 100
    primary_srv.sigkill()

    # Keep writing through the Sentinel client until it lands on the new
    # primary (which has one replica left).
    deadline = time.monotonic() + FAILOVER_TIMEOUT
    written_after = 0
    i = 100
    while written_after < 50:
        assert time.monotonic() < deadline, "no failover within the time allowed"
        try:
            write(i, 1)
            written_after += 1
            i += 1
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            time.sleep(0.2)

    new_host, new_port = sentinel.discover_master("mymaster")
    assert new_port in {r.port for r in replicas}
    promoted = next(r for r in replicas if r.port == new_port)
    other = next(r for r in replicas if r.port != new_port)
    new_primary = promoted.client()
    assert new_primary.info("replication")["role"] == "master"
    on_new_primary = {eid for eid, _ in new_primary.xrange("orders")}
    assert set(acked) <= on_new_primary
    assert len(acked) >= 150
    follower = other.client()
    wait_until(lambda: follower.info("replication").get("master_port") == new_port
               and follower.info("replication")["master_link_status"] == "up", timeout=30)
    assert new_primary.wait(1, 10_000) >= 1
    assert follower.xrange("orders") == new_primary.xrange("orders")
