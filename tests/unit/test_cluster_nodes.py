"""The node table and slot map of tidelog.cluster.nodes: invariants after
every change (each slot has at most one owner, the owners' bitmaps and
counts agree with the map, masters list their replicas)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.cluster.messages import MASTER, MYSELF, SLAVE, slots_of
from tidelog.cluster.nodes import Node, Topology, random_name
from tidelog.keyslot import SLOTS


def check(t: Topology) -> None:
    for node in t.nodes.values():
        owned = [s for s in range(SLOTS) if t.owners[s] is node]
        assert slots_of(node.slots) == owned
        assert node.numslots == len(owned)
        for r in node.replicas:
            assert r.master is node and r.is_replica
    for owner in t.owners:
        assert owner is None or owner.name in t.nodes


@settings(deadline=None)  # each check walks the 16384 slots: no time limit on a busy machine
@given(st.lists(st.tuples(st.sampled_from("aur"), st.integers(0, 2), st.integers(0, SLOTS - 1)),
                max_size=60))
def test_slot_map_invariants(ops):
    me = Node(random_name(), MYSELF | MASTER)
    t = Topology(me)
    others = [Node(random_name(), MASTER) for _ in range(2)]
    for n in others:
        t.add_node(n)
    nodes = [me, *others]
    for op, who, slot in ops:
        node = nodes[who]
        if node.name not in t.nodes:
            continue
        if op == "a":
            t.assign(slot, node)
        elif op == "u":
            t.unassign(slot)
        elif node is not me:
            t.remove_node(node)
        check(t)


def test_ranges_and_roles():
    me = Node(random_name(), MYSELF | MASTER)
    t = Topology(me)
    for s in [*range(0, 10), 100, *range(16380, 16384)]:
        t.assign(s, me)
    assert t.slot_ranges(me) == [(0, 9), (100, 100), (16380, 16383)]
    r = Node(random_name(), MASTER)
    t.add_node(r)
    t.set_master(r, me)
    assert r.flags & SLAVE and not r.flags & MASTER and me.replicas == [r]
    assert t.master_of(r) is me
    t.set_master(r, None)
    assert r.is_master and me.replicas == []
    old = r.name
    t.rename(r, b"f" * 40)
    assert old not in t.nodes and t.nodes[b"f" * 40] is r
