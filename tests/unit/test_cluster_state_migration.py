"""Replica migration to orphaned masters in an in-memory network of real
cluster state machines (tidelog.cluster.state and .migration over
tests/support/cluster_net.py), with Redis 7.0.15's semantics (the orphan
count of clusterCron, clusterHandleSlaveMigration, the MIGRATE_TO flag of
clusterNodeAddSlave / clusterNodeRemoveSlave / clusterNodeSetSlotBit /
clusterSetNodeAsMaster), and what ``cluster-allow-replica-migration no``
does to a master that loses its last slot (clusterUpdateSlotsConfigWith).

The simulated clock moves in steps of 100 ms; node_timeout is 1000 ms."""

from __future__ import annotations

from tests.support.cluster_net import Net, NetNode
from tidelog.cluster import texts
from tidelog.cluster.actions import Log
from tidelog.cluster.messages import FAIL_FLAG, MASTER, MIGRATE_TO, MYSELF, PFAIL, SLAVE
from tidelog.cluster.migration import MIGRATION_DELAY_MS
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.state import KNOWN_FLAGS
from tidelog.keyslot import SLOTS

from .test_cluster_state import TIMEOUT, epochs_settled
from .test_cluster_state_failover import replica_everywhere


def name(digit: str) -> bytes:
    return digit.encode() * 40


def cluster(replica_of: list[int], masters: int = 3, names: list[bytes] | None = None,
            spare: int = 0, **settings: object) -> Net:
    """``masters`` masters with the slots spread over them (known everywhere
    before any replica is set), then node ``masters + k`` a replica of
    master ``replica_of[k]``, then ``spare`` masters without slots;
    ``settings`` on every node; all ok."""
    net = Net(masters + len(replica_of) + spare, node_timeout=TIMEOUT, names=names)
    for n in net.nodes:
        for key, value in settings.items():
            setattr(n.state.settings, key, value)
    net.form(slots=False)
    net.spread_slots(net.nodes[:masters])
    last = net.nodes[masters - 1]
    net.run_until(lambda: net.owner_everywhere(SLOTS - 1, last) and net.owner_everywhere(0, net[0]),
                  10_000)
    for k, m in enumerate(replica_of):
        r = net[masters + k]
        net.call(r.state.replicate, r.view(net[m]), net.now)

    def settled() -> bool:
        return (all(n.topology.state_ok for n in net.live())
                and all(replica_everywhere(net, net[masters + k], net[m])
                        for k, m in enumerate(replica_of)))

    net.run_until(settled, 10_000)
    net.run_until(lambda: epochs_settled(net), 10_000)
    return net


def masters_of(net: Net) -> dict[int, int | None]:
    """Each node's master (its index) as that node itself sees it."""
    out: dict[int, int | None] = {}
    for n in net.live():
        master = n.me.master
        out[n.index] = None if master is None else net.by_name(master.name).index
    return out


def failing_in(n: NetNode, other: NetNode) -> bool:
    node = n.view(other)
    return node is not None and bool(node.flags & (PFAIL | FAIL_FLAG))


def migration_logs(n: NetNode) -> list[str]:
    return [log.text for log in n.logs if isinstance(log, Log) and "orphaned" in log.text]


# -- the MIGRATE_TO flag -------------------------------------------------------------------
def test_migrate_to_follows_the_replicas_of_a_master():
    me = Node(name("a"), MYSELF | MASTER)
    t = Topology(me)
    m = Node(name("b"), MASTER)
    r = Node(name("c"), MASTER)
    for node in (m, r):
        t.add_node(node)
    t.assign(0, m)  # a first slot while no master has replicas: no flag
    assert not m.flags & MIGRATE_TO
    t.set_master(r, m)  # a replica: the master is a target of replica migration
    assert m.flags & MIGRATE_TO and r.flags & SLAVE and not r.flags & MIGRATE_TO
    t.assign(1, me)  # a first slot while some master has replicas: flagged
    assert me.flags & MIGRATE_TO
    t.set_master(r, None)  # its only replica gone: no more a target
    assert not m.flags & MIGRATE_TO
    t.set_master(r, m)
    t.remove_node(r)  # forgotten: the same
    assert not m.flags & MIGRATE_TO and m.replicas == []


def test_migrate_to_is_not_written_to_nodes_conf_and_comes_back_on_load():
    net = cluster([0])
    for n in net.live():
        text = texts.nodes_conf(n.topology)
        assert "migrate" not in text
        loaded = texts.load_nodes_conf(text)
        assert {node.name: node.flags & MIGRATE_TO for node in loaded.nodes.values()} == \
            {node.name: node.flags & MIGRATE_TO for node in n.topology.nodes.values()}
        assert loaded.nodes[net[0].name].flags & MIGRATE_TO


def test_a_master_with_a_replica_says_so_in_its_flags():
    net = cluster([0])
    master = net[0]
    # as Redis 7.0.15's header flags: 273 = myself|master|migrate-to
    assert master.state.header(0).flags == MYSELF | MASTER | MIGRATE_TO == 273
    assert net[1].state.header(0).flags == MYSELF | MASTER
    for n in net.live():
        assert n.view(master).flags & MIGRATE_TO
        assert not n.view(net[1]).flags & MIGRATE_TO and not n.view(net[2]).flags & MIGRATE_TO


# -- the migration -------------------------------------------------------------------------
def test_an_orphaned_master_gets_a_replica_after_the_delay():
    # 0 has replicas 3 and 4, 1 has 5, 2 has 6; 5 goes: 1 is orphaned
    net = cluster([0, 0, 1, 2])
    mover, stayer, lost = net[3], net[4], net[5]
    saves = len(mover.saves)
    net.down(lost)
    net.run_until(lambda: failing_in(mover, lost), 5 * TIMEOUT)
    orphaned_at = net.now
    net.run_until(lambda: mover.me.master.name == net[1].name, 3 * MIGRATION_DELAY_MS)
    # not before the master was orphaned for the delay, and at the first tick after it
    assert MIGRATION_DELAY_MS < net.now - orphaned_at <= MIGRATION_DELAY_MS + 200
    assert migration_logs(mover) == [f"Migrating to orphaned master {net[1].name.decode()}"]
    assert [log.level for log in mover.logs if "orphaned" in log.text] == ["warning"]
    assert mover.replicates[-1].master is not None and mover.replicates[-1].master.name == net[1].name
    assert len(mover.saves) > saves
    net.run_until(lambda: replica_everywhere(net, mover, net[1]), 5000)
    net.run(3000)
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 1, 4: 0, 6: 2}
    assert migration_logs(stayer) == []
    assert all(n.topology.state_ok for n in net.live())


def test_the_smallest_id_among_the_replicas_of_the_fullest_masters_moves_and_only_one():
    # 0 has 3 and 4, 2 has 5 and 6, 1 has 7: every replica of 0 and 2 is a
    # candidate, the one with the smallest id (6) moves, the others stay
    names = [name(d) for d in "89abe735"]
    net = cluster([0, 0, 2, 2, 1], names=names)
    assert min(names[3:7]) == net[6].name
    net.down(net[7])
    net.run_until(lambda: net[6].me.master.name == net[1].name, 5 * TIMEOUT + 3 * MIGRATION_DELAY_MS)
    net.run(3 * MIGRATION_DELAY_MS)
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 0, 4: 0, 5: 2, 6: 1}
    assert [bool(migration_logs(net[i])) for i in range(3, 7)] == [False, False, False, True]


def test_no_move_when_the_barrier_would_be_broken():
    # barrier 2: master 0 must keep more than 2 working replicas
    net = cluster([0, 0, 1], migration_barrier=2)
    net.down(net[5])
    net.run(5 * TIMEOUT + 2 * MIGRATION_DELAY_MS)
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 0, 4: 0}
    assert not any(migration_logs(n) for n in net.live())
    # barrier 1 (CONFIG SET reaches the settings): one of them moves
    for n in net.live():
        n.state.settings.migration_barrier = 1
    net.run_until(lambda: net[3].me.master.name == net[1].name, 2 * MIGRATION_DELAY_MS)


def test_no_move_without_a_master_with_two_working_replicas():
    # barrier 0, but every master has one replica: no master has a spare
    net = cluster([0, 1, 2], migration_barrier=0)
    net.down(net[4])
    net.run(5 * TIMEOUT + 2 * MIGRATION_DELAY_MS)
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 0, 5: 2}


def test_no_move_with_allow_replica_migration_no():
    net = cluster([0, 0, 1], allow_replica_migration=False)
    net.down(net[5])
    net.run(5 * TIMEOUT + 2 * MIGRATION_DELAY_MS)
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 0, 4: 0}
    for n in net.live():
        n.state.settings.allow_replica_migration = True
    net.run_until(lambda: net[3].me.master.name == net[1].name, 2 * MIGRATION_DELAY_MS)


def test_a_master_that_never_had_replicas_is_not_an_orphan():
    # 0 has two replicas, 1 and 2 never had one: no orphan, nobody moves
    net = cluster([0, 0])
    net.run(2 * MIGRATION_DELAY_MS)
    for n in net.live():
        assert not n.view(net[1]).flags & MIGRATE_TO and not n.view(net[2]).flags & MIGRATE_TO
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 0, 4: 0}
    assert not any(migration_logs(n) for n in net.live())


def test_a_replica_back_before_the_delay_ends_the_orphan():
    net = cluster([0, 0, 1])
    mover, lost = net[3], net[5]
    net.down(lost)
    net.run_until(lambda: failing_in(mover, lost), 5 * TIMEOUT)
    net.run(MIGRATION_DELAY_MS - 2 * TIMEOUT)
    net.up(lost)
    net.run_until(lambda: not any(failing_in(n, lost) for n in net.live()), 5 * TIMEOUT)
    assert mover.view(net[1]).orphaned_time
    net.step()  # the next tick sees the master with a working replica again
    assert mover.view(net[1]).orphaned_time == 0
    net.run(2 * MIGRATION_DELAY_MS)
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 0, 4: 0, 5: 1}
    # orphaned again: the delay counts from the new spell, not the first one
    net.down(lost)
    net.run_until(lambda: failing_in(mover, lost), 5 * TIMEOUT)
    orphaned_at = net.now
    net.run_until(lambda: mover.me.master.name == net[1].name, 3 * MIGRATION_DELAY_MS)
    assert net.now - orphaned_at > MIGRATION_DELAY_MS


def test_no_move_while_the_cluster_is_down():
    # master 2 (no replica) and the replica of 1 go: the state turns fail
    # before the delay ends, so nobody moves until 2 is back
    net = cluster([0, 0, 1])
    net.down(net[2])
    net.down(net[5])
    net.run_until(lambda: not net[3].topology.state_ok, 5 * TIMEOUT)
    net.run(2 * MIGRATION_DELAY_MS)
    assert masters_of(net)[3] == 0 and masters_of(net)[4] == 0
    net.up(net[2])
    net.run_until(lambda: net[3].me.master.name == net[1].name, 3 * MIGRATION_DELAY_MS)
    assert net[3].topology.state_ok


def test_a_replica_promoted_in_place_of_a_master_with_replicas_is_a_target():
    # 1 fails, its replica 5 takes over: a target once orphaned (it has no replica)
    net = cluster([0, 0, 1])
    net.down(net[1])
    net.run_until(lambda: all(n.view(net[5]) is not None and n.view(net[5]).is_master
                              and n.view(net[5]).numslots for n in net.live()), 10 * TIMEOUT)
    for n in net.live():
        if n is not net[5]:
            assert n.view(net[5]).flags & MIGRATE_TO & KNOWN_FLAGS
    net.run_until(lambda: net[3].me.master is not None and net[3].me.master.name == net[5].name,
                  3 * MIGRATION_DELAY_MS)
    assert migration_logs(net[3]) == [f"Migrating to orphaned master {net[5].name.decode()}"]


def test_a_master_getting_its_first_slot_while_others_have_replicas_gets_one():
    # 1 has replicas 3 and 4, 2 has 5; 6 is a master without slots that
    # takes slots of 0: a valid target of replica migration at once
    net = cluster([1, 1, 2], spare=1)
    new = net[6]
    for n in net.live():
        assert not n.view(new).flags & MIGRATE_TO
    for s in range(100):
        new.topology.assign(s, new.me)
    new.state.bump_epoch()
    net.call(new.state.claim_slots_changed)
    net.run_until(lambda: net.owner_everywhere(0, new), 3000)
    for n in net.live():
        assert n.view(new).flags & MIGRATE_TO
    net.run_until(lambda: net[3].me.master.name == new.name, 3 * MIGRATION_DELAY_MS)
    net.run_until(lambda: replica_everywhere(net, net[3], new), 5000)
    net.run(2 * MIGRATION_DELAY_MS)
    # master 0 lost some slots but never had a replica: nobody goes there
    assert masters_of(net) == {0: None, 1: None, 2: None, 3: 6, 4: 1, 5: 2, 6: None}


# -- cluster-allow-replica-migration and a master that loses its last slot -----------------
def test_a_master_that_lost_its_slots_to_a_master_with_more_stays_a_master_when_not_allowed():
    net = Net(3)
    for n in net.nodes:
        n.state.settings.allow_replica_migration = False
    net.form()
    a, b, c = net.nodes
    net.run_until(lambda: epochs_settled(net), 10_000)
    c_slots = range(2 * SLOTS // 3, SLOTS)
    for s in c_slots:
        b.topology.assign(s, b.me)
    b.state.bump_epoch()
    net.call(b.state.claim_slots_changed)
    net.run_until(lambda: net.owner_everywhere(SLOTS - 1, b), 3000)
    net.run(1000)
    # b claims its own slots as well: c stays a master, without slots
    assert c.me.is_master and c.me.numslots == 0 and c.me.master is None
    assert all(n.view(c).is_master for n in net.live())


def test_a_master_that_lost_its_slots_to_a_node_taking_only_those_follows_it_when_not_allowed():
    net = Net(4)
    for n in net.nodes:
        n.state.settings.allow_replica_migration = False
    net.form(slots=False)
    net.spread_slots(net.nodes[:3])
    a, b, c, d = net.nodes
    net.run_until(lambda: epochs_settled(net), 10_000)
    for s in range(2 * SLOTS // 3, SLOTS):
        d.topology.assign(s, d.me)
    d.state.bump_epoch()
    net.call(d.state.claim_slots_changed)
    # d claims exactly c's slots: c was failed over (not migrated), it follows d
    net.run_until(lambda: replica_everywhere(net, c, d), 5000)
    assert c.me.numslots == 0 and c.replicates[-1].master.name == d.name
