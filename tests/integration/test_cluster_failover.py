"""Failover, resharding and the bus's PUBLISH with real processes.

A master killed with ``kill -9`` is replaced by its replica (an election
among the other masters), and comes back as the replica of the winner;
``CLUSTER FAILOVER`` swaps the roles back; ``redis-cli --cluster reshard``
moves slots with their keys; a redis-server 7.0.15 replica of a Tidelog
master wins the election the Tidelog masters vote in, and the reverse.  Every process goes
through the ``processes`` fixture (killed in its finaliser); every wait is
bounded.  The node timeout is 2 s, so that failure detection is quick."""

from __future__ import annotations

import threading
import time

import pytest
import redis
from redis.cluster import RedisCluster

from tests.support.cluster import ClusterNode, ClusterNodes, require_cluster_mode
from tidelog.keyslot import key_slot

NODE_TIMEOUT = 2000
WAIT_S = 40.0


@pytest.fixture
def cluster(processes, tmp_path):
    require_cluster_mode()
    return ClusterNodes(processes, tmp_path, node_timeout=NODE_TIMEOUT)


def wait_for(what: str, check, cluster: ClusterNodes, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except redis.ConnectionError:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s\n{cluster.diagnostics()}")
        time.sleep(0.1)


def nodes_table(node: ClusterNode) -> dict[str, dict]:
    """CLUSTER NODES of one node, by id: role, master id, flags, slots."""
    table = {}
    for line in node.client().execute_command("CLUSTER", "NODES").strip().splitlines():
        words = line.split()
        flags = words[2].split(",")
        table[words[0]] = {"flags": flags, "master": words[3], "slots": " ".join(words[8:]),
                           "role": "master" if "master" in flags else "replica"}
    return table


def alive(cluster: ClusterNodes, *dead: ClusterNode) -> list[ClusterNode]:
    return [n for n in cluster.nodes if n not in dead]


def created(cluster: ClusterNodes, replicas: int = 0) -> None:
    result = cluster.create(replicas)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    cluster.wait_agree()


def fill(cluster: ClusterNodes, count: int) -> dict[str, str]:
    client = RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port, decode_responses=True,
                          socket_timeout=10)
    try:
        data = {f"key:{i}": f"value-{i}" for i in range(count)}
        for key, value in data.items():
            assert client.set(key, value)
        return data
    finally:
        client.close()


def read_all(node: ClusterNode, data: dict[str, str]) -> None:
    client = RedisCluster(host="127.0.0.1", port=node.port, decode_responses=True,
                          socket_timeout=10)
    try:
        for key, value in data.items():
            assert client.get(key) == value, key
    finally:
        client.close()


def replicas_caught_up(cluster: ClusterNodes, nodes: list[ClusterNode]) -> bool:
    by_id = {n.node_id(): n for n in nodes}
    table = nodes_table(nodes[0])
    for node_id, row in table.items():
        if row["role"] == "replica" and node_id in by_id and row["master"] in by_id:
            if by_id[node_id].client().dbsize() != by_id[row["master"]].client().dbsize():
                return False
    return True


def test_a_killed_master_is_replaced_and_comes_back_as_a_replica(cluster):
    for _ in range(6):
        cluster.tidelog()
    created(cluster, replicas=1)
    data = fill(cluster, 400)
    wait_for("replicas caught up", lambda: replicas_caught_up(cluster, cluster.nodes), cluster)

    by_id = {n.node_id(): n for n in cluster.nodes}
    table = nodes_table(cluster.nodes[0])
    victim_id = next(i for i, r in table.items() if r["role"] == "master" and r["slots"])
    heir_id = next(i for i, r in table.items() if r["master"] == victim_id)
    victim, heir = by_id[victim_id], by_id[heir_id]
    slots = table[victim_id]["slots"]

    # A writer on the victim's slots, each SET followed by WAIT 1: what WAIT
    # acknowledged must be on the replica that takes over.
    first, last = (int(x) for x in slots.split()[0].split("-"))
    keys = [k for k in (f"w:{i}" for i in range(200_000))
            if first <= key_slot(k.encode()) <= last][:20_000]
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        client = victim.client()
        try:
            for key in keys:
                if stop.is_set():
                    return
                client.set(key, "v")
                if client.wait(1, 2000) == 1:
                    acknowledged.append(key)
        except (redis.ConnectionError, redis.TimeoutError):
            return  # the kill

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_for("some writes acknowledged", lambda: len(acknowledged) >= 50, cluster)
        victim.process.sigkill()
        killed = time.monotonic()
    finally:
        stop.set()
        thread.join(30)
    rest = alive(cluster, victim)

    def promoted() -> bool:
        for node in rest:
            row = nodes_table(node)
            if row[heir_id]["role"] != "master" or row[heir_id]["slots"] != slots:
                return False
            if "fail" not in row[victim_id]["flags"]:
                return False
        return all("cluster_state:ok" in n.client().execute_command("CLUSTER", "INFO")
                   for n in rest)

    wait_for("the replica takes over", promoted, cluster)
    print(f"failover after kill -9: {time.monotonic() - killed:.2f} s "
          f"(node timeout {NODE_TIMEOUT} ms)")
    assert heir.client().execute_command("ROLE")[0] == "master"
    read_all(heir, data)
    on_heir = heir.client()
    missing = [k for k in acknowledged if on_heir.get(k) != "v"]
    assert not missing, f"{len(missing)} of {len(acknowledged)} WAIT-acknowledged writes lost"

    cluster.restart_tidelog(victim)
    wait_for("the old master follows the new one",
             lambda: all(nodes_table(n)[victim_id]["master"] == heir_id
                         and "fail" not in nodes_table(n)[victim_id]["flags"]
                         for n in cluster.nodes), cluster)
    wait_for("its data is the new master's",
             lambda: victim.client().dbsize() == heir.client().dbsize(), cluster)

    # CLUSTER FAILOVER on it under a writer through a cluster client: the
    # roles swap back, and every write that got its OK is on the new master.
    written: list[str] = []
    stop.clear()

    def cluster_writer() -> None:
        client = RedisCluster(host="127.0.0.1", port=heir.port, decode_responses=True,
                              socket_timeout=10)
        try:
            for i, key in enumerate(keys):
                if stop.is_set():
                    return
                if client.set(key, f"m{i}"):
                    written.append(key)
        finally:
            client.close()

    thread = threading.Thread(target=cluster_writer)
    thread.start()
    try:
        wait_for("the writer is writing", lambda: len(written) >= 50, cluster)
        assert victim.client().execute_command("CLUSTER", "FAILOVER") == "OK"
        wait_for("the manual failover", lambda: all(
            nodes_table(n)[victim_id]["role"] == "master"
            and nodes_table(n)[heir_id]["master"] == victim_id for n in cluster.nodes), cluster)
        count = len(written)
        wait_for("writes after the failover", lambda: len(written) >= count + 50, cluster)
    finally:
        stop.set()
        thread.join(30)
    read_all(victim, data)
    on_victim = victim.client()
    values = {key: f"m{i}" for i, key in enumerate(keys)}
    missing = [k for k in written if on_victim.get(k) != values[k]]
    assert not missing, f"{len(missing)} of {len(written)} acknowledged writes lost"
    log = victim.log()
    assert "Manual failover user request accepted." in log
    assert "Failover election won: I'm the new master." in log


@pytest.mark.long
def test_takeover_needs_no_election(cluster):
    for _ in range(6):
        cluster.tidelog()
    created(cluster, replicas=1)
    table = nodes_table(cluster.nodes[0])
    by_id = {n.node_id(): n for n in cluster.nodes}
    replica_id, row = next((i, r) for i, r in table.items() if r["role"] == "replica")
    replica = by_id[replica_id]
    assert replica.client().execute_command("CLUSTER", "FAILOVER", "TAKEOVER") == "OK"
    wait_for("the takeover is seen everywhere", lambda: all(
        nodes_table(n)[replica_id]["role"] == "master"
        and nodes_table(n)[row["master"]]["master"] == replica_id for n in cluster.nodes),
        cluster)
    # its config epoch (a new one if it was not the greatest) is the greatest
    # of all the masters, so its claim wins everywhere
    epochs = {}
    for line in replica.client().execute_command("CLUSTER", "NODES").strip().splitlines():
        words = line.split()
        if "master" in words[2]:
            epochs[words[0]] = int(words[6])
    assert epochs[replica_id] == max(epochs.values())
    assert list(epochs.values()).count(epochs[replica_id]) == 1
    log = replica.log()
    assert "Taking over the master (user request)." in log
    assert "Failover election won" not in log


@pytest.mark.long
def test_reshard_moves_slots_with_their_keys(cluster):
    for _ in range(3):
        cluster.tidelog()
    created(cluster)
    data = fill(cluster, 300)
    source, target = cluster.nodes[0], cluster.nodes[1]
    before = source.client().dbsize() + target.client().dbsize()
    started = time.monotonic()
    result = cluster.cli("--cluster", "reshard", source.address, "--cluster-from",
                         source.node_id(), "--cluster-to", target.node_id(),
                         "--cluster-slots", "200", "--cluster-yes", timeout=300)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    print(f"reshard of 200 slots: {took:.2f} s")
    views = cluster.wait_agree()
    target_row = next(v for v in views[0] if v[0] == target.node_id())
    assert target_row[2].startswith("0-199 ")
    check = cluster.check(source)
    assert check.returncode == 0 and "[OK] All 16384 slots covered." in check.stdout
    assert source.client().dbsize() + target.client().dbsize() == before
    read_all(cluster.nodes[2], data)


def test_publish_reaches_the_subscribers_of_every_node(cluster):
    for _ in range(3):
        cluster.tidelog()
    created(cluster)
    subscribers = []
    for node in cluster.nodes:
        pubsub = node.client().pubsub()
        pubsub.subscribe("news")
        assert pubsub.get_message(timeout=5)["type"] == "subscribe"
        subscribers.append(pubsub)
    try:
        receivers = cluster.nodes[0].client().publish("news", "hello")
        assert receivers == 1  # the local subscriber only, as Redis counts
        for pubsub in subscribers:
            message = pubsub.get_message(timeout=10)
            assert message is not None and message["data"] == "hello", message
    finally:
        for pubsub in subscribers:
            pubsub.close()


def kill9(node: ClusterNode) -> None:
    proc = node.process
    if hasattr(proc, "sigkill"):
        proc.sigkill()
    else:
        proc.kill()  # (Popen.kill is SIGKILL)
        proc.wait(30)


@pytest.mark.long
@pytest.mark.parametrize(("masters", "replica_kind"), [("tidelog", "redis"), ("redis", "tidelog")])
def test_a_replica_of_the_other_kind_wins_the_election(cluster, masters, replica_kind):
    """Three masters of one kind, a replica of the other added to one of
    them: kill -9 that master, the other masters vote the replica in
    (Tidelog voting for a redis-server 7.0.15 replica, and the reverse)."""
    for _ in range(3):
        getattr(cluster, masters)()
    created(cluster)
    master = cluster.nodes[0]
    master_id = master.node_id()
    replica = getattr(cluster, replica_kind)()
    added = cluster.cli("--cluster", "add-node", replica.address, master.address,
                        "--cluster-slave", "--cluster-master-id", master_id)
    assert added.returncode == 0, added.stdout + added.stderr + cluster.diagnostics()
    replica_id = replica.node_id()
    wait_for("the replica is seen as one", lambda: all(
        nodes_table(n).get(replica_id, {}).get("master") == master_id for n in cluster.nodes),
        cluster)
    first, last = (int(x) for x in nodes_table(master)[master_id]["slots"].split()[0].split("-"))
    key = next(f"k{i}" for i in range(10_000) if first <= key_slot(f"k{i}".encode()) <= last)
    master.client().set(key, "v")
    reader = replica.client()
    reader.execute_command("READONLY")  # a replica's reads, not a redirection
    wait_for("it replicates", lambda: reader.get(key) == "v", cluster)
    slots = nodes_table(master)[master_id]["slots"]
    kill9(master)
    rest = alive(cluster, master)
    wait_for("the replica takes over", lambda: all(
        nodes_table(n)[replica_id]["role"] == "master"
        and nodes_table(n)[replica_id]["slots"] == slots for n in rest), cluster)
    assert replica.client().get(key) == "v"


@pytest.mark.long
def test_add_node_rebalance_fix_and_del_node(cluster):
    """redis-cli's other tools on an all-Tidelog cluster: add-node (an empty
    master), rebalance onto it (--cluster-use-empty-masters), fix of a slot
    left open, rebalance it empty again (weight 0), del-node."""
    for _ in range(3):
        cluster.tidelog()
    created(cluster)
    data = fill(cluster, 300)
    new = cluster.tidelog()
    added = cluster.cli("--cluster", "add-node", new.address, cluster.nodes[0].address)
    assert added.returncode == 0, added.stdout + added.stderr + cluster.diagnostics()
    new_id = new.node_id()
    wait_for("the new node is known", lambda: all(
        new_id in nodes_table(n) for n in cluster.nodes), cluster)
    # a new master takes writes once it saw the majority for the rejoin delay
    # (node timeout, at most 5 s), as in Redis: RESTORE-ASKING waits for that
    wait_for("the new node's state ok",
             lambda: "cluster_state:ok" in new.client().execute_command("CLUSTER", "INFO"),
             cluster)
    result = cluster.cli("--cluster", "rebalance", cluster.nodes[0].address,
                         "--cluster-use-empty-masters", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    views = cluster.wait_agree()
    assert next(v for v in views[0] if v[0] == new_id)[2], "the new master got no slots"
    read_all(cluster.nodes[0], data)

    # a slot left migrating/importing (as a reshard cut short leaves it): fix closes it
    owner = cluster.nodes[0]
    owner_id = owner.node_id()
    slot = int(nodes_table(owner)[owner_id]["slots"].split()[0].split("-")[0])
    target = cluster.nodes[1]
    assert target.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING",
                                           owner_id) == "OK"
    assert owner.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING",
                                          target.node_id()) == "OK"
    check = cluster.check(owner)
    assert "open slot" in check.stdout.lower() or check.returncode != 0, check.stdout
    fixed = cluster.cli("--cluster", "fix", owner.address, "--cluster-yes", timeout=300)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr + cluster.diagnostics()
    cluster.wait_agree()
    check = cluster.check(owner)
    assert check.returncode == 0 and "[OK] All 16384 slots covered." in check.stdout, check.stdout

    emptied = cluster.cli("--cluster", "rebalance", cluster.nodes[0].address, "--cluster-weight",
                          f"{new_id}=0", timeout=600)
    assert emptied.returncode == 0, emptied.stdout + emptied.stderr + cluster.diagnostics()
    wait_for("the new node empty", lambda: not nodes_table(cluster.nodes[0])[new_id]["slots"],
             cluster)
    removed = cluster.cli("--cluster", "del-node", cluster.nodes[0].address, new_id)
    assert removed.returncode == 0, removed.stdout + removed.stderr + cluster.diagnostics()
    cluster.nodes.remove(new)
    wait_for("it is forgotten", lambda: all(new_id not in nodes_table(n)
                                            for n in cluster.nodes), cluster)
    cluster.wait_agree()
    read_all(cluster.nodes[1], data)
