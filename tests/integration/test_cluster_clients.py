"""redis-py's cluster clients, sync and asyncio, over an all-Tidelog cluster
of three primaries with a replica each: a fixed script of stream commands
(XADD, XRANGE, consumer groups with XREADGROUP, XACK, XPENDING), pipelines
whose commands span every node, and reads served by replicas
(round robin over primary and replicas, which sends READONLY).  Every reply is checked;
any error fails the test.  The processes go through the ``processes``
fixture (killed in its finaliser); every wait is bounded."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
import redis.asyncio.cluster
from redis.cluster import LoadBalancingStrategy, RedisCluster

from tests.support.cluster import ClusterNodes, require_cluster_mode
from tests.support.processes import ProcessGroup
from tidelog.keyslot import key_slot

STREAMS = [f"orders:{{{i}}}" for i in range(12)]  # hash tags: spread over the slots
WAIT_S = 30.0


@pytest.fixture(scope="module")
def six_nodes(tmp_path_factory):
    require_cluster_mode()
    group = ProcessGroup(tmp_path_factory.mktemp("cluster-clients"))
    try:
        cluster = ClusterNodes(group, tmp_path_factory.mktemp("nodes"))
        for _ in range(6):
            cluster.tidelog()
        result = cluster.create(replicas=1)
        assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
        cluster.wait_agree()
        yield cluster
    finally:
        group.stop_all()


def replicas_have(cluster: ClusterNodes, count: int) -> None:
    """Until every replica holds as many keys as its primary (bounded)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        sizes = {n.node_id(): n.client().dbsize() for n in cluster.nodes}
        table = [line.split() for line in cluster.nodes[0].client().execute_command(
            "CLUSTER", "NODES").strip().splitlines()]
        pairs = [(w[0], w[3]) for w in table if w[3] != "-"]
        if sum(sizes[m] for _, m in pairs) >= count and all(
                sizes[r] == sizes[m] for r, m in pairs):
            return
        assert time.monotonic() < deadline, f"replicas behind: {sizes}"
        time.sleep(0.1)


def test_sync_cluster_client_script(six_nodes):
    client = RedisCluster(host="127.0.0.1", port=six_nodes.nodes[0].port,
                          decode_responses=True, socket_timeout=10)
    reader = RedisCluster(host="127.0.0.1", port=six_nodes.nodes[2].port,
                          decode_responses=True, socket_timeout=10,
                          load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN)
    try:
        client.flushall()
        ids = {}
        for stream in STREAMS:
            ids[stream] = [client.xadd(stream, {"n": str(i)}) for i in range(5)]
            assert client.xlen(stream) == 5
            assert [e[0] for e in client.xrange(stream)] == ids[stream]
            assert client.xgroup_create(stream, "workers", id="0") is True
            got = client.xreadgroup("workers", "w1", {stream: ">"}, count=3)
            assert [e[0] for e in got[0][1]] == ids[stream][:3]
            assert client.xack(stream, "workers", *ids[stream][:2]) == 2
            pending = client.xpending(stream, "workers")
            assert pending["pending"] == 1 and pending["min"] == ids[stream][2]
        pipe = client.pipeline()
        for i in range(60):
            pipe.set(f"p:{i}", i)
            pipe.incr(f"c:{i}")
        assert pipe.execute() == [True, 1] * 60
        pipe = client.pipeline()
        for i in range(60):
            pipe.get(f"p:{i}")
        assert pipe.execute() == [str(i) for i in range(60)]
        replicas_have(six_nodes, 120 + len(STREAMS))
        for _ in range(2):  # round robin: each read once from a primary, once from a replica
            for i in range(60):
                assert reader.get(f"p:{i}") == str(i)
            for stream in STREAMS:
                assert [e[0] for e in reader.xrange(stream)] == ids[stream]
    finally:
        client.close()
        reader.close()


def test_asyncio_cluster_client_script(six_nodes):
    async def script() -> None:
        client = redis.asyncio.cluster.RedisCluster(
            host="127.0.0.1", port=six_nodes.nodes[1].port, decode_responses=True,
            socket_timeout=10)
        reader = redis.asyncio.cluster.RedisCluster(
            host="127.0.0.1", port=six_nodes.nodes[3].port, decode_responses=True,
            socket_timeout=10, load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN)
        try:
            await client.flushall()
            for stream in STREAMS:
                entry = await client.xadd(stream, {"a": "1"})
                await client.xgroup_create(stream, "g", id="0")
                got = await client.xreadgroup("g", "c", {stream: ">"})
                assert got[0][1][0][0] == entry
                assert await client.xack(stream, "g", entry) == 1
                info = await client.xinfo_groups(stream)
                assert info[0]["pending"] == 0 and info[0]["last-delivered-id"] == entry
            pipe = client.pipeline()
            for i in range(40):
                pipe.rpush(f"l:{i}", "a", "b")
                pipe.lrange(f"l:{i}", 0, -1)
            assert await pipe.execute() == [2, ["a", "b"]] * 40
            replicas_have(six_nodes, 40 + len(STREAMS))
            for _ in range(2):
                for i in range(40):
                    assert await reader.lrange(f"l:{i}", 0, -1) == ["a", "b"]
        finally:
            await client.aclose()
            await reader.aclose()

    asyncio.run(script())


def test_the_replica_answers_readonly_reads(six_nodes):
    """READONLY on a replica: its own slots' reads answered there, writes
    redirected to the primary (MOVED), as Redis does."""
    table = [line.split() for line in six_nodes.nodes[0].client().execute_command(
        "CLUSTER", "NODES").strip().splitlines()]
    replica_id = next(w[0] for w in table if w[3] != "-")
    replica = next(n for n in six_nodes.nodes if n.node_id() == replica_id)
    reader = replica.client()
    served = _slots_of(table, next(w[3] for w in table if w[0] == replica_id))
    key = next(f"r{i}" for i in range(100_000) if key_slot(f"r{i}".encode()) in served)
    with pytest.raises(redis.exceptions.MovedError):
        reader.get(key)
    assert reader.execute_command("READONLY") is True  # (redis-py reads the OK as True)
    assert reader.get(key) is None
    with pytest.raises(redis.exceptions.MovedError):
        reader.set(key, "x")


def _slots_of(table: list[list[str]], node_id: str) -> set[int]:
    slots: set[int] = set()
    for words in table:
        if words[0] == node_id:
            for part in words[8:]:
                first, _, last = part.partition("-")
                slots.update(range(int(first), int(last or first) + 1))
    return slots
