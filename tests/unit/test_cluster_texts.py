"""nodes.conf and CLUSTER NODES lines (tidelog.cluster.texts): the line of
each kind of node, the file's round trip, the 7.2 aux-field form, and the
errors of a broken file."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tidelog.cluster.messages import FAIL_FLAG, MASTER, MYSELF, NOFAILOVER, PFAIL
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.texts import (
    flags_text,
    info_text,
    load_nodes_conf,
    node_line,
    nodes_conf,
    nodes_text,
    shards_reply,
    slots_reply,
)

A, B, C = (c * 40 for c in "abc")


def sample() -> Topology:
    me = Node(A.encode(), MYSELF | MASTER, ip=b"127.0.0.1", port=7000, cport=17000,
              config_epoch=2, hostname=b"a.example")
    t = Topology(me)
    b = Node(B.encode(), MASTER | PFAIL, ip=b"127.0.0.1", port=7001, cport=17001, config_epoch=3,
             ping_sent=10, pong_received=20, link=object())
    c = Node(C.encode(), MASTER, ip=b"10.0.0.3", port=7002, cport=17002)
    for n in (b, c):
        t.add_node(n)
    t.set_master(c, b)
    for s in range(0, 11):
        t.assign(s, me)
    t.assign(99, me)
    for s in range(100, 16384):
        t.assign(s, b)
    t.migrating_to[7] = b
    t.importing_from[150] = b
    t.current_epoch, t.last_vote_epoch = 3, 1
    return t


def test_lines():
    t = sample()
    me, b, c = (t.nodes[x.encode()] for x in (A, B, C))
    assert node_line(t, me) == (f"{A} 127.0.0.1:7000@17000,a.example myself,master - 0 0 2 "
                                f"connected 0-10 99 [7->-{B}] [150-<-{B}]")
    assert node_line(t, b) == f"{B} 127.0.0.1:7001@17001 master,fail? - 10 20 3 connected 100-16383"
    # A replica prints its master's config epoch, and no slots.
    assert node_line(t, c) == f"{C} 10.0.0.3:7002@17002 slave {B} 0 0 3 disconnected"
    assert flags_text(0) == "noflags"
    assert flags_text(MASTER | FAIL_FLAG | NOFAILOVER) == "master,fail,nofailover"


def test_file_round_trip():
    t = sample()
    t.nodes[B.encode()].ping_sent = t.nodes[B.encode()].pong_received = 0
    t.nodes[B.encode()].link = None
    text = nodes_conf(t)
    assert text.endswith("vars currentEpoch 3 lastVoteEpoch 1\n")
    loaded = load_nodes_conf(text)
    assert nodes_conf(loaded) == text
    assert nodes_text(loaded) == text.rsplit("vars", 1)[0]
    assert loaded.myself.name == A.encode()
    assert loaded.nodes[C.encode()].master is loaded.nodes[B.encode()]
    assert loaded.nodes[B.encode()].replicas == [loaded.nodes[C.encode()]]


def test_redis_72_aux_fields():
    text = (f"{A} 127.0.0.1:7000@17000,host-a,shard-id={'d' * 40},nodename=alpha,tls-port=0 "
            "myself,master - 0 0 1 connected 0-16383\nvars currentEpoch 1 lastVoteEpoch 0\n")
    t = load_nodes_conf(text)
    assert t.myself.hostname == b"host-a"
    assert t.myself.shard_id == b"d" * 40
    assert t.myself.human_nodename == b"alpha"
    assert t.myself.numslots == 16384


@pytest.mark.parametrize(("text", "why"), [
    ("", "no node is flagged myself"),
    (f"{A} 127.0.0.1:7000@17000 master - 0 0 1 connected\n", "no node is flagged myself"),
    (f"{A} 127.0.0.1:7000@17000 myself,master - 0 0 1\n", "fewer than 8 fields"),
    ("xyz 127.0.0.1:7000@17000 myself,master - 0 0 1 connected\n", "bad node id"),
    (f"{A} 127.0.0.1:7000 myself,master - 0 0 1 connected\n", "bad address"),
    (f"{A} 127.0.0.1:7000@17000 myself,boss - 0 0 1 connected\n", "unknown flag"),
    (f"{A} 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 16384\n", "out of range"),
    (f"{A} 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 9-3\n", "bad slot range"),
    (f"{A} :7000@17000 myself,master - 0 0 1 connected\n"
     f"{B} :7001@17001 myself,master - 0 0 1 connected\n", "two nodes flagged myself"),
])
def test_broken_files(text, why):
    with pytest.raises(ValueError, match=why):
        load_nodes_conf(text)


def test_redis_72_file_with_empty_hostnames_and_a_replica():
    """7.2 always writes the hostname field after the bus port, empty when
    none is set, then its aux fields (tls-port, shard-id)."""
    text = (f"{B} 127.0.0.1:30002@40002,,tls-port=0,shard-id={'e' * 40} slave {A} 0 "
            "1700000000123 1 connected\n"
            f"{A} 127.0.0.1:30001@40001,,tls-port=0,shard-id={'e' * 40} myself,master - 0 0 1 "
            "connected 0-16383\n"
            "vars currentEpoch 1 lastVoteEpoch 0\n")
    t = load_nodes_conf(text)
    a, b = t.nodes[A.encode()], t.nodes[B.encode()]
    assert t.myself is a and b.master is a and a.replicas == [b]
    assert a.hostname == b.hostname == b"" and a.shard_id == b.shard_id == b"e" * 40
    assert nodes_text(t) == (  # (myself first: the loader's order)
        f"{A} 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-16383\n"
        f"{B} 127.0.0.1:30002@40002 slave {A} 0 0 1 disconnected\n")


def test_info_text_takes_counts_by_type_as_a_list_or_a_mapping():
    t = sample()
    as_list = info_text(t, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], [], 0)
    assert info_text(t, {0: 1, 10: 2}, {}, 0) == as_list
    assert "cluster_stats_messages_ping_sent:1\r\ncluster_stats_messages_publishshard_sent:2\r\n" \
        "cluster_stats_messages_sent:3\r\ncluster_stats_messages_received:0\r\n" in as_list
    assert as_list.startswith("cluster_state:fail\r\ncluster_slots_assigned:16296\r\n"
                              "cluster_slots_ok:12\r\ncluster_slots_pfail:16284\r\n")


@given(st.lists(st.tuples(st.integers(0, 16383), st.integers(0, 40), st.integers(-1, 3)),
                max_size=80))
def test_slot_ranges_from_the_bitmaps_equal_one_pass_over_the_map(changes):
    """Both ways to the ranges (the owners' bitmaps for a map in a few
    pieces, a pass over the map otherwise) give what the map says."""
    from tidelog.cluster import texts
    from tidelog.cluster.nodes import random_name
    me = Node(random_name(), MYSELF | MASTER)
    topology = Topology(me)
    nodes = [me] + [Node(random_name(), MASTER) for _ in range(3)]
    for node in nodes[1:]:
        topology.add_node(node)
    for first, length, who in changes:
        for slot in range(first, min(first + length, 16383) + 1):
            if who < 0:
                topology.unassign(slot)
            else:
                topology.assign(slot, nodes[who])
    expected: dict = {}
    for owner, first, last in texts.owner_runs(topology):
        if owner is not None:
            expected.setdefault(owner, []).append((first, last))
    assert texts.slot_ranges_by_node(topology) == expected
    many = {n: [(s, s) for s in range(0, 16384, 2)] for n in [me]}
    for slot in range(16384):
        topology.unassign(slot)
    for slot in range(0, 16384, 2):
        topology.assign(slot, me)
    assert texts.slot_ranges_by_node(topology) == many  # past MANY_RUNS: the other way


def test_ports_given_to_plain_clients_under_tls_cluster():
    """7.0.15 under tls-cluster: a node's port is its TLS port and pport its
    plain one; a plain client is given pport (when the node has one) in
    CLUSTER NODES and SLOTS; CLUSTER SHARDS gives port and tls-port."""
    t = sample()
    me, b, c = (t.nodes[x.encode()] for x in (A, B, C))
    me.pport, b.pport = 6000, 6001  # c announced none
    assert node_line(t, me, plain=True).startswith(f"{A} 127.0.0.1:6000@17000,a.example ")
    assert node_line(t, c, plain=True).startswith(f"{C} 10.0.0.3:7002@17002 ")
    assert node_line(t, me) == node_line(t, me, plain=False)
    assert " 127.0.0.1:7000@" in nodes_text(t) and " 127.0.0.1:6000@" in nodes_text(t, True)
    assert nodes_conf(t) == nodes_conf(sample())  # the file keeps the TLS ports
    assert [e[2][1] for e in slots_reply(t, "ip", 0, plain=True)] == [6000, 6000, 6001]
    assert [e[2][1] for e in slots_reply(t, "ip", 0)] == [7000, 7000, 7001]
    b_shard = shards_reply(t, "ip", 0, tls_cluster=True)[1]
    fields = [dict(n.items) for n in dict(b_shard.items)[b"nodes"]]
    assert [(f.get(b"port"), f.get(b"tls-port")) for f in fields] == [(6001, 7001),
                                                                      (None, 7002)]
    plain_fields = [dict(n.items) for n in
                    dict(shards_reply(t, "ip", 0)[1].items)[b"nodes"]]
    assert [(f.get(b"port"), f.get(b"tls-port")) for f in plain_fields] == [(7001, None),
                                                                            (7002, None)]
