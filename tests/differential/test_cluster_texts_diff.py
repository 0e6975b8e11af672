"""nodes.conf and CLUSTER NODES as redis-server 7.0.15 writes them: the
files two real nodes wrote (slots, a hostname, an open slot each way,
epochs) load into a Topology whose texts are the same bytes again."""

from __future__ import annotations

import time

from tests.support.cluster import ClusterNodes
from tidelog.cluster.texts import load_nodes_conf, nodes_conf, nodes_text

WAIT_S = 30.0


def test_redis_written_files_round_trip(processes, tmp_path):
    cluster = ClusterNodes(processes, tmp_path)
    a, b = cluster.redis(), cluster.redis()
    ca, cb = a.client(), b.client()
    ca.config_set("cluster-announce-hostname", "a.example")
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "100")
    ca.execute_command("CLUSTER", "ADDSLOTS", "200", "16383")
    ca.execute_command("CLUSTER", "SET-CONFIG-EPOCH", "3")
    cb.execute_command("CLUSTER", "ADDSLOTSRANGE", "101", "150")
    cb.execute_command("CLUSTER", "SET-CONFIG-EPOCH", "4")
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", str(b.port))
    id_a, id_b = a.node_id(), b.node_id()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        views = [c.execute_command("CLUSTER", "NODES") for c in (ca, cb)]
        if all(v.count(" connected") == 2 and "handshake" not in v for v in views):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the two nodes did not meet: {views}")
    ca.execute_command("CLUSTER", "SETSLOT", "5", "MIGRATING", id_b)
    ca.execute_command("CLUSTER", "SETSLOT", "120", "IMPORTING", id_b)
    for node, client in ((a, ca), (b, cb)):
        client.execute_command("CLUSTER", "SAVECONFIG")
        text = (node.workdir / "nodes.conf").read_text()
        topology = load_nodes_conf(text)
        me = topology.myself
        assert me.name.decode() == (id_a if node is a else id_b)
        # Loaded nodes start with no ping in flight, no pong and no link (Redis's
        # loader does the same): compare with those fields of the file reset.
        # The order of the lines is the order of a hash table in Redis.
        def reset(fields: list[str]) -> str:
            if fields[0] == "vars":
                return " ".join(fields)
            link = "connected" if "myself" in fields[2] else "disconnected"
            return " ".join(fields[:4] + ["0", "0", fields[6], link] + fields[8:])

        expected = [reset(line.split()) for line in text.splitlines()]
        assert expected[-1].startswith("vars ")
        ours = nodes_conf(topology).splitlines()
        assert ours[-1] == expected[-1]
        assert sorted(ours[:-1]) == sorted(expected[:-1])
        assert sorted(nodes_text(topology).splitlines()) == sorted(expected[:-1])
    topology = load_nodes_conf((a.workdir / "nodes.conf").read_text())
    assert topology.myself.hostname == b"a.example"
    assert topology.slot_ranges(topology.myself) == [(0, 100), (200, 200), (16383, 16383)]
    assert topology.migrating_to[5].name.decode() == id_b
    assert topology.importing_from[120].name.decode() == id_b
    assert topology.nodes[id_b.encode()].config_epoch == 4
