"""Clusters of real processes made by redis-cli: all Tidelog, Tidelog beside
redis-server 7.0.15, Tidelog beside valkey-server 9.1; a RedisCluster client
over every slot; a Tidelog node killed and started again on its nodes.conf.

Each test starts its processes through the ``processes`` fixture (killed in
its finaliser) in directories of their own; every wait is bounded."""

from __future__ import annotations

import time

import pytest
import redis
from redis.cluster import RedisCluster

from tests.support.cluster import ClusterNodes, require_cluster_mode
from tidelog.keyslot import SLOTS, key_slot


@pytest.fixture
def cluster(processes, tmp_path):
    require_cluster_mode()
    return ClusterNodes(processes, tmp_path)


def created(cluster: ClusterNodes) -> float:
    """Create the cluster and check it through every node; the seconds
    from ``--cluster create`` to every node agreeing."""
    started = time.monotonic()
    result = cluster.create()
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    assert "[OK] All 16384 slots covered." in result.stdout
    cluster.wait_agree()
    took = time.monotonic() - started
    for node in cluster.nodes:
        check = cluster.check(node)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "[OK] All nodes agree about slots configuration." in check.stdout
        assert "[OK] All 16384 slots covered." in check.stdout
    return took


def test_three_tidelog_nodes(cluster):
    for _ in range(3):
        cluster.tidelog()
    took = created(cluster)
    print(f"3 Tidelog nodes formed a cluster in {took:.2f} s")
    views = cluster.views()
    masters = [v for v in views[0] if v[1] == "master"]
    assert len(masters) == 3
    assert all(slots for _, _, slots in masters)


@pytest.mark.parametrize("others", ["redis", "valkey"])
def test_mixed_cluster(cluster, others):
    """2 Tidelog + 1 redis-server 7.0.15, or 1 Tidelog + 2 valkey-server 9.1."""
    if others == "redis":
        cluster.tidelog()
        cluster.tidelog()
        cluster.redis()
    else:
        cluster.tidelog()
        cluster.valkey()
        cluster.valkey()
    created(cluster)


@pytest.mark.parametrize(("masters", "replicas"), [
    ("tidelog", "redis"), ("redis", "tidelog"),
    pytest.param("tidelog", "valkey", marks=pytest.mark.long),
    pytest.param("valkey", "tidelog", marks=pytest.mark.long)])
def test_six_nodes_primaries_of_one_kind_replicas_of_the_other(cluster, masters, replicas):
    """3 primaries of one kind, each with a replica of the other, made by
    ``redis-cli --cluster create ... --cluster-replicas 1`` (it takes the first
    three nodes named as primaries) and checked through each of the six."""
    for kind in (masters, masters, masters, replicas, replicas, replicas):
        getattr(cluster, kind)()
    result = cluster.create(replicas=1)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    cluster.wait_agree()
    kind_of = {n.node_id(): n.kind for n in cluster.nodes}
    lines = cluster.nodes[0].client().execute_command("CLUSTER", "NODES").strip().splitlines()
    pairs = []
    for line in lines:
        words = line.split()
        if words[3] != "-":
            pairs.append((kind_of[words[3]], kind_of[words[0]]))
    assert sorted(pairs) == [(masters, replicas)] * 3, lines
    for node in cluster.nodes:
        check = cluster.check(node)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "[OK] All nodes agree about slots configuration." in check.stdout
        assert "[OK] All 16384 slots covered." in check.stdout


def test_redis_cluster_client_over_all_slots(cluster):
    for _ in range(3):
        cluster.tidelog()
    created(cluster)
    first = cluster.nodes[0]
    client = RedisCluster(host="127.0.0.1", port=first.port, decode_responses=True,
                          socket_timeout=10)
    try:
        keys: dict[int, str] = {}
        i = 0
        while len(keys) < SLOTS and i < 400_000:  # one key of every slot
            key = f"k{i}"
            keys.setdefault(key_slot(key.encode()), key)
            i += 1
        assert len(keys) == SLOTS
        sample = [keys[s] for s in range(0, SLOTS, 7)]  # slots of every node, bounded in count
        for key in sample:
            assert client.set(key, key + "-v")
        for key in sample:
            assert client.get(key) == key + "-v"
        for key in sample[:300]:
            stream = "{" + key + "}s"
            entry = client.xadd(stream, {"f": key})
            assert client.xrange(stream) == [(entry, {"f": key})]
        total = sum(n.client().dbsize() for n in cluster.nodes)
        assert total == len(sample) + 300
    finally:
        client.close()


def test_restarted_node_rejoins(cluster):
    for _ in range(3):
        cluster.tidelog()
    created(cluster)
    node = cluster.nodes[1]
    before_id = node.node_id()
    before = cluster.views()[0]
    node.process.sigkill()
    cluster.restart_tidelog(node)
    assert node.node_id() == before_id
    after = cluster.wait_agree()
    assert after[0] == before


def test_locked_nodes_conf_refuses_to_start(processes, tmp_path):
    """A second node on the same nodes.conf: Redis refuses it (the file is flocked)."""
    from tests.support.cluster import cluster_args, free_pair
    from tidelog.server.cluster_config import lock_config

    workdir = tmp_path / "node"
    workdir.mkdir()
    fd = lock_config(str(workdir / "nodes.conf"))
    try:
        port = free_pair()
        proc = processes.tidelog(cluster_args(port, workdir), port=port, ready=False)
        assert proc.wait(30) != 0
        log = (workdir / "server.log").read_text()
        assert "is already used by a different Redis Cluster node" in log
    finally:
        import os
        os.close(fd)


def test_broken_nodes_conf_refuses_to_start(processes, tmp_path):
    require_cluster_mode()
    from tests.support.cluster import cluster_args, free_pair

    workdir = tmp_path / "node"
    workdir.mkdir()
    (workdir / "nodes.conf").write_text("this is not a nodes.conf\n")
    port = free_pair()
    proc = processes.tidelog(cluster_args(port, workdir), port=port, ready=False)
    assert proc.wait(30) != 0
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=port, socket_connect_timeout=1).ping()


def test_started_from_a_config_file(cluster, processes, tmp_path):
    """`tidelog-server node.conf` with cluster-enabled yes in the file: a new
    node, its nodes.conf written and naming it."""
    from tests.support.cluster import free_pair

    workdir = tmp_path / "from-file"
    workdir.mkdir()
    port = free_pair()
    conf = workdir / "node.conf"
    conf.write_text(f"port {port}\nbind 127.0.0.1\nsave \"\"\ndir {workdir}\n"
                    "cluster-enabled yes\ncluster-config-file nodes-a.conf\n"
                    "cluster-node-timeout 5000\n")
    processes.tidelog([str(conf)], port=port)
    client = redis.Redis(port=port, decode_responses=True)
    my_id = client.execute_command("CLUSTER", "MYID")
    assert len(my_id) == 40
    assert my_id in (workdir / "nodes-a.conf").read_text()
    assert client.config_get("cluster-enabled") == {"cluster-enabled": "yes"}
    assert client.info("cluster")["cluster_enabled"] == 1
