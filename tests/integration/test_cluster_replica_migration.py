"""Replica migration with real processes: three Tidelog masters, one with
two replicas (a Tidelog node and a redis-server 7.0.15), one with a single
Tidelog replica, one without; the single replica is killed with ``kill -9``
and the replica with the smallest node id among the two of the first
master moves to the orphaned master, once it has been orphaned for 5 s
(Redis 7.0.15's clusterHandleSlaveMigration, the same rule in both kinds).
The ids are re-rolled (CLUSTER RESET HARD before joining) so that the
mover is a Tidelog node in one run and the redis-server in the other.

Every process goes through the ``processes`` fixture (killed in its
finaliser); every wait is bounded.  The node timeout is 2 s."""

from __future__ import annotations

import pytest

from tests.support.cluster import ClusterNode, ClusterNodes, require_cluster_mode
from tidelog.keyslot import key_slot

from .test_cluster_failover import created, kill9, nodes_table, wait_for

NODE_TIMEOUT = 2000
WAIT_S = 60.0


@pytest.fixture
def cluster(processes, tmp_path):
    require_cluster_mode()
    return ClusterNodes(processes, tmp_path, node_timeout=NODE_TIMEOUT)


def master_of_everywhere(nodes: list[ClusterNode], replica_id: str, master_id: str) -> bool:
    return all(nodes_table(n).get(replica_id, {}).get("master") == master_id for n in nodes)


def replicas_of(node: ClusterNode, master_id: str) -> set[str]:
    return {i for i, row in nodes_table(node).items() if row["master"] == master_id}


@pytest.mark.long
@pytest.mark.parametrize("mover_kind", ["tidelog", "redis"])
def test_the_smallest_id_replica_moves_to_the_orphaned_master(cluster, mover_kind):
    a, b, c = (cluster.tidelog() for _ in range(3))
    created(cluster)  # the slots, known everywhere before any node has a replica
    twin, other, lone = cluster.tidelog(), cluster.redis(), cluster.tidelog()
    mover, stayer = (twin, other) if mover_kind == "tidelog" else (other, twin)
    for _ in range(64):  # a new id until the mover's is the smaller one
        if mover.node_id() < stayer.node_id():
            break
        assert mover.client().execute_command("CLUSTER", "RESET", "HARD") == "OK"
    mover_id, stayer_id = mover.node_id(), stayer.node_id()
    assert mover_id < stayer_id
    for node in (twin, other, lone):
        assert node.client().execute_command("CLUSTER", "MEET", "127.0.0.1", a.port) == "OK"
    cluster.wait_agree(WAIT_S)
    a_id, b_id, c_id = a.node_id(), b.node_id(), c.node_id()
    for node, master_id in ((twin, a_id), (other, a_id), (lone, b_id)):
        assert node.client().execute_command("CLUSTER", "REPLICATE", master_id) == "OK"
    lone_id = lone.node_id()
    wait_for("the replicas are seen as such", lambda: all(
        master_of_everywhere(cluster.nodes, r, m)
        for r, m in ((mover_id, a_id), (stayer_id, a_id), (lone_id, b_id))), cluster, WAIT_S)

    kill9(lone)
    rest = [n for n in cluster.nodes if n is not lone]
    wait_for("the mover replicates the orphaned master everywhere",
             lambda: master_of_everywhere(rest, mover_id, b_id), cluster, WAIT_S)
    assert f"Migrating to orphaned master {b_id}" in mover.log()
    assert "Migrating to orphaned master" not in stayer.log()
    for node in rest:
        assert replicas_of(node, a_id) == {stayer_id}
        assert replicas_of(node, b_id) == {mover_id, lone_id}
        assert replicas_of(node, c_id) == set()
        assert "fail" in nodes_table(node)[lone_id]["flags"]

    # it replicates its new master
    first, last = (int(x) for x in nodes_table(b)[b_id]["slots"].split()[0].split("-"))
    key = next(f"k{i}" for i in range(10_000) if first <= key_slot(f"k{i}".encode()) <= last)
    assert b.client().set(key, "moved")
    reader = mover.client()
    reader.execute_command("READONLY")
    wait_for("the write reaches the mover", lambda: reader.get(key) == "moved", cluster, WAIT_S)

    for node in (a, b, c):
        check = cluster.check(node)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "[OK] All 16384 slots covered." in check.stdout, check.stdout
