"""The cluster state machine (tidelog.cluster.state) in an in-memory network
of real instances (tests/support/cluster_net.py): the handshake, the gossip,
slot claims and config epochs, the cluster state, failure detection,
FORGET, PUBLISH over the bus, RESET.  Elections, manual failovers and
UPDATE are in test_cluster_state_failover.py.  Semantics of Redis 7.0.15's
cluster (clusterProcessPacket, clusterCron, clusterUpdateState...).

Deterministic: seeded random sources, a simulated clock in steps of 100 ms,
node_timeout 1000 ms unless a test says otherwise."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.cluster_net import IP, START_MS, Net, NetNode
from tidelog.cluster.actions import Deliver
from tidelog.cluster.messages import (
    FAIL,
    FAIL_FLAG,
    HANDSHAKE,
    MASTER,
    MYSELF,
    PFAIL,
)
from tidelog.cluster.state import BLACKLIST_TTL_MS, KNOWN_FLAGS, WRITABLE_DELAY_MS
from tidelog.keyslot import SLOTS

TIMEOUT = 1000


def view(n: NetNode) -> set[tuple[bytes, bytes, int, int, int]]:
    """What ``n`` knows of the cluster, as comparable on every node."""
    return {(node.name, node.ip, node.port, node.cport, node.flags & KNOWN_FLAGS & ~MYSELF)
            for node in n.topology.nodes.values()}


def owner_names(n: NetNode) -> list[bytes | None]:
    return [None if o is None else o.name for o in n.topology.owners]


def epochs_settled(net: Net) -> bool:
    """Every master has a config epoch of its own, and every node knows them."""
    masters = [n for n in net.nodes if n.me.is_master]
    mine = [n.me.config_epoch for n in masters]
    seen = [[getattr(n.view(m), "config_epoch", None) for m in masters] for n in net.live()]
    return len(set(mine)) == len(mine) and all(epochs == mine for epochs in seen)


def shards(masters: int = 3, replicas: int = 1, node_timeout: int = TIMEOUT) -> Net:
    """``masters`` masters with the slots spread over them, each with
    ``replicas`` replicas (nodes masters..., then the replicas of master 0,
    of master 1, ...), all ok."""
    net = Net(masters * (1 + replicas), node_timeout=node_timeout)
    net.form(slots=False)
    net.spread_slots(net.nodes[:masters])
    for i in range(masters):
        for j in range(replicas):
            r = net[masters + i * replicas + j]
            net.call(r.state.replicate, r.view(net[i]), net.now)

    def settled() -> bool:
        for n in net.live():
            if not n.topology.state_ok:
                return False
            for i in range(masters):
                for j in range(replicas):
                    r = n.view(net[masters + i * replicas + j])
                    if r is None or r.master is None or r.master.name != net[i].name:
                        return False
        return True

    net.run_until(settled, 10_000)
    return net


# -- 1. MEET ---------------------------------------------------------------------------
def test_meet_makes_everyone_know_everyone():
    net = Net(3)
    a, b, c = net.nodes
    net.meet(a, b)
    # a handshake node on a until b's PONG names it; b knows a at once (from the MEET)
    net.meet(a, c)
    took = net.run_until(net.everyone_knows_everyone, 3000)
    assert took <= 2000
    net.run(1000)
    for n in net.nodes:
        assert len(n.topology.nodes) == 3
        assert not any(node.flags & (HANDSHAKE | PFAIL | FAIL_FLAG) for node in n.topology.nodes.values())
        for other in net.nodes:
            node = n.view(other)
            assert node is not None and node.ip == IP and node.port == other.port
            assert node.cport == other.port + 10000
            assert node.flags & KNOWN_FLAGS == (MASTER | MYSELF if other is n else MASTER)
    assert view(a) == view(b) == view(c)
    # b and c learnt of each other through the gossip only, and linked up
    assert b.view(c).link is not None and c.view(b).link is not None


def test_nodes_without_an_address_learn_it_from_the_bus():
    # as a server without cluster-announce-ip starts: myself has no address
    net = Net(3)
    for n in net.nodes:
        n.me.ip = b""
    a, b, c = net.nodes
    net.meet(a, b)
    net.meet(a, c)
    net.run_until(net.everyone_knows_everyone, 3000)
    net.run(1000)
    assert all(n.me.ip == IP for n in net.nodes)  # b and c from the MEET, a from a PING
    assert view(a) == view(b) == view(c)
    assert {node[1] for node in view(a)} == {IP}


def test_a_node_back_on_another_port_is_followed():
    net = Net(3)
    net.form()
    c = net[2]
    net.down(c)
    c.port, c.cport = c.port + 100, c.cport + 100
    c.me.port, c.me.cport = c.port, c.cport
    net.run(300)
    net.up(c)
    net.run_until(lambda: all(n.view(c).port == c.port and n.view(c).cport == c.cport
                              and n.view(c).link is not None for n in net.nodes if n is not c),
                  3000)
    assert any("Address updated for node" in log.text for n in net.nodes for log in n.logs)
    net.run(1000)
    assert view(net[0]) == view(net[1]) == view(c)


def test_meet_twice_is_one_handshake():
    net = Net(2)
    a, b = net.nodes
    a.state.meet(IP, b.port, b.cport, net.now)
    a.state.meet(IP, b.port, b.cport, net.now)
    assert sum(1 for n in a.topology.nodes.values() if n.flags & HANDSHAKE) == 1
    net.pump()
    net.run_until(net.everyone_knows_everyone, 2000)
    assert len(a.topology.nodes) == len(b.topology.nodes) == 2


def test_handshake_with_nobody_times_out():
    net = Net(2)
    a, b = net.nodes
    net.down(b)
    net.meet(a, b)
    assert len(a.topology.nodes) == 2
    net.run(TIMEOUT + 500)
    assert list(a.topology.nodes) == [a.name] and a.failed_connects > 0


# -- 2. slots and config epochs --------------------------------------------------------
def test_slot_claims_spread_and_epochs_end_distinct():
    net = Net(3)
    assert all(n.me.config_epoch == 0 for n in net.nodes)
    net.form(slots=False)
    net.spread_slots(net.nodes)
    expected = [n.name for n in net.nodes for _ in range(n.me.numslots)]
    assert len(expected) == SLOTS and expected.count(net[0].name) == SLOTS // 3
    net.run_until(lambda: all(owner_names(n) == expected for n in net.nodes), 3000)

    net.run_until(lambda: epochs_settled(net), 10_000)
    for n in net.nodes:
        assert n.topology.current_epoch == max(m.me.config_epoch for m in net.nodes)
    # equal epochs again (as after CLUSTER SET-CONFIG-EPOCH 5 on each): they differ soon
    for n in net.nodes:
        n.me.config_epoch = n.topology.current_epoch = 5
    net.run_until(lambda: epochs_settled(net), 10_000)
    net.run_until(lambda: epochs_settled(net), 5000)
    # the slot map did not move through all that
    assert all(owner_names(n) == expected for n in net.nodes)
    assert any("configEpoch collision" in log.text for n in net.nodes for log in n.logs)


def test_a_claim_with_a_greater_epoch_wins_a_slot():
    net = Net(3)
    net.form()
    a, b, c = net.nodes
    net.run_until(lambda: epochs_settled(net), 10_000)
    slot = SLOTS - 1  # c's
    net.run(500)
    a.topology.assign(slot, a.me)
    a.state.bump_epoch()
    assert a.me.config_epoch == max(n.me.config_epoch for n in net.nodes)
    net.call(a.state.claim_slots_changed)
    net.run_until(lambda: net.owner_everywhere(slot, a), 3000)
    # c lost a slot it served: it is told to delete its keys
    assert any(slot in d.slots for d in c.deletes)
    assert c.me.is_master and c.me.numslots == SLOTS - 2 * SLOTS // 3 - 1


# -- 3. the cluster state --------------------------------------------------------------
def test_state_turns_ok_after_the_writable_delay_once_every_slot_is_served():
    net = Net(4)
    net.form(slots=False)
    net.spread_slots(net.nodes[:3])  # the 4th stays a master without slots
    net.run(500)
    assert not any(n.topology.state_ok for n in net.nodes)
    ok_at: dict[int, int] = {}

    def all_ok() -> bool:
        for n in net.nodes:
            if n.topology.state_ok and n.index not in ok_at:
                ok_at[n.index] = net.now
        return len(ok_at) == 4

    net.run_until(all_ok, 5000)
    for n in net.nodes:
        assert ok_at[n.index] - n.state.first_update >= WRITABLE_DELAY_MS
        assert n.topology.size == 3


def test_a_master_serving_every_slot_from_the_start_waits_the_writable_delay():
    # as after a restart with nodes.conf: the slots are there before the first tick
    net = Net(1)
    n = net[0]
    for s in range(SLOTS):
        n.topology.assign(s, n.me)
    took = net.run_until(lambda: n.topology.state_ok, 5000)
    assert n.state.first_update == START_MS + 100  # the first tick
    assert net.now - n.state.first_update == WRITABLE_DELAY_MS
    assert took == WRITABLE_DELAY_MS + 100
    assert n.topology.size == 1


def test_state_stays_fail_with_a_slot_unserved():
    net = Net(2)
    net.form(slots=False)
    net.assign(net[0], range(0, 8000))
    net.assign(net[1], range(8000, SLOTS - 1))
    net.run(5000)
    assert not any(n.topology.state_ok for n in net.nodes)
    assert all(n.topology.size == 2 for n in net.nodes)
    net.assign(net[1], [SLOTS - 1])
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 3000)


# -- 4. failure detection ----------------------------------------------------------------
def test_a_master_down_is_pfail_then_fail_everywhere():
    net = Net(4)
    net.form(slots=False)
    net.spread_slots(net.nodes[:3])
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 5000)
    c = net[2]
    net.down(c)
    down_at = net.now
    first_pfail = 0

    def failed() -> bool:
        nonlocal first_pfail
        flags = [n.view(c).flags for n in net.live()]
        if not first_pfail and any(f & (PFAIL | FAIL_FLAG) for f in flags):
            first_pfail = net.now
        return all(f & FAIL_FLAG for f in flags)

    net.run_until(failed, 4 * TIMEOUT)
    assert first_pfail - down_at > TIMEOUT
    # the node that reached the quorum told the others with FAIL
    assert sum(n.state.stats_sent[FAIL] for n in net.live()) > 0
    assert sum(n.state.stats_received[FAIL] for n in net.live()) > 0
    net.run(200)
    assert not any(n.topology.state_ok for n in net.live())
    # back: a master that still owns slots keeps FAIL until nobody failed it over
    # for 2 x node_timeout, then it is cleared and the cluster is ok again
    net.up(c)
    net.run(300)
    assert all(n.view(c).flags & FAIL_FLAG for n in net.live() if n is not c)
    net.run_until(lambda: not any(n.view(c).flags & (FAIL_FLAG | PFAIL)
                                  for n in net.live()), 3 * TIMEOUT)
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 6000)


def test_a_slotless_master_or_replica_back_is_cleared_at_once():
    net = shards(2, 1)  # masters 0, 1; replicas 2 (of 0), 3 (of 1)
    extra = net
    for victim in (extra[2], extra[3]):
        net.down(victim)
        net.run_until(lambda v=victim: all(n.view(v).flags & FAIL_FLAG for n in net.live()),
                      4 * TIMEOUT)
        # a replica's failure does not fail the cluster
        assert all(n.topology.state_ok for n in net.live())
        net.up(victim)
        took = net.run_until(lambda v=victim: not any(
            n.view(v).flags & (FAIL_FLAG | PFAIL) for n in net.live()), 2000)
        assert took <= 600
    assert any("is reachable again" in log.text for n in net.nodes for log in n.logs)


def test_a_master_without_slots_back_is_cleared_at_once():
    net = Net(4)
    net.form(slots=False)
    net.spread_slots(net.nodes[:3])
    d = net[3]
    net.down(d)
    net.run_until(lambda: all(n.view(d).flags & FAIL_FLAG for n in net.live()), 4 * TIMEOUT)
    net.up(d)
    took = net.run_until(lambda: not any(n.view(d).flags & (FAIL_FLAG | PFAIL)
                                         for n in net.live()), 3 * TIMEOUT)
    assert took <= 600  # not after 2 x node_timeout as a master with slots
    assert any("master without slots is reachable again" in log.text
               for n in net.nodes for log in n.logs)


def test_fail_needs_the_reports_of_a_majority_of_masters_through_the_gossip():
    net = Net(5)  # 5 masters with slots: FAIL needs 3 (its own view and 2 reports)
    net.form()
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 6000)
    e = net[4]
    net.down(e)
    net.run_until(lambda: all(n.view(e).flags & FAIL_FLAG for n in net.live()), 6 * TIMEOUT)
    assert max(len(n.view(e).fail_reports) for n in net.live()) >= 2
    assert any("reported node" in log.text and "as not reachable" in log.text
               for n in net.live() for log in n.logs)


def test_a_paused_master_is_failed_then_cleared_when_it_resumes():
    # its links stay open but nothing is answered (a stopped process)
    net = Net(3)
    net.form()
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 5000)
    c = net[2]
    net.down(c, close_links=False)
    net.run_until(lambda: all(n.view(c).flags & FAIL_FLAG for n in net.live()), 4 * TIMEOUT)
    net.up(c)
    # its slots were not failed over: FAIL is undone after 2 x node_timeout
    net.run_until(lambda: not any(n.view(m).flags & (FAIL_FLAG | PFAIL)
                                  for n in net.nodes for m in net.nodes), 4 * TIMEOUT)
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 6000)
    assert all(len(n.topology.nodes) == 3 for n in net.nodes)


def test_pfail_from_a_minority_is_not_fail():
    # 3 masters with slots: the quorum is 2; one master cut from one other only
    # would need a second report.  Here: the node is down for less than the timeout.
    net = Net(3)
    net.form()
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 5000)
    c = net[2]
    net.down(c)
    net.run(TIMEOUT - 300)
    net.up(c)
    net.run(3000)
    assert not any(n.view(c).flags & (PFAIL | FAIL_FLAG) for n in net.nodes)
    assert all(n.topology.state_ok for n in net.nodes)


# -- 9. FORGET -----------------------------------------------------------------------------
def test_forget_keeps_a_node_out_for_a_minute():
    net = Net(3)
    net.form()
    a, b, c = net.nodes
    net.run(1000)
    net.call(a.state.forget, a.view(c), net.now)
    forgot_at = net.now
    assert a.view(c) is None
    assert a.topology.owners[SLOTS - 1] is None and a.topology.forgotten[c.name] > net.now
    # b and c keep gossiping about c all this time: a does not take it back
    while net.now - forgot_at < BLACKLIST_TTL_MS - 200:
        net.step()
        assert a.view(c) is None
    net.run_until(lambda: a.view(c) is not None and a.view(c).flags & KNOWN_FLAGS == MASTER,
                  10_000)
    net.run_until(lambda: net.owner_everywhere(SLOTS - 1, c), 5000)
    assert c.name not in a.topology.forgotten


# -- 10. PUBLISH ---------------------------------------------------------------------------
def test_publish_reaches_every_node_and_spublish_the_shard():
    net = shards(3, 1)  # replicas: 3 of 0, 4 of 1, 5 of 2
    a = net[0]
    net.call(a.state.publish, b"ch", b"m", False)
    for n in net.nodes:
        assert n.delivered == ([] if n is a else [Deliver(b"ch", b"m", False)])
    for n in net.nodes:
        n.delivered.clear()
    net.call(a.state.publish, b"sch", b"x", True)
    assert [n.index for n in net.nodes if n.delivered] == [3]
    assert net[3].delivered == [Deliver(b"sch", b"x", True)]
    net[3].delivered.clear()
    net.call(net[4].state.publish, b"sch", b"y", True)  # from a replica: its master
    assert [n.index for n in net.nodes if n.delivered] == [1]


# -- 11. RESET ------------------------------------------------------------------------------
def test_reset_hard_forgets_everything_and_takes_a_new_name():
    net = Net(3)
    net.form()
    net.run_until(lambda: epochs_settled(net), 10_000)
    c = net[2]
    old = c.name
    assert c.topology.current_epoch > 0
    net.call(c.state.reset, True, net.now)
    assert c.name != old and len(c.name) == 40
    assert (c.topology.current_epoch, c.topology.last_vote_epoch, c.me.config_epoch) == (0, 0, 0)
    assert list(c.topology.nodes) == [c.name]
    assert c.me.numslots == 0 and set(c.topology.owners) == {None}
    assert c.me.flags & KNOWN_FLAGS == MYSELF | MASTER
    # the others still ping its address: it learns nobody from that, they see a stranger
    net.run(3000)
    assert list(c.topology.nodes) == [c.name]
    assert not c.topology.state_ok


def test_reset_soft_of_a_replica_keeps_the_name():
    net = shards(1, 1)
    r = net[1]
    name = r.name
    net.call(r.state.reset, False, net.now)
    assert r.name == name and r.me.is_master and r.me.master is None
    assert list(r.topology.nodes) == [name]
    assert r.replicates[-1].master is None


# -- invariants under random claims --------------------------------------------------------
@settings(max_examples=5, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, SLOTS - 1), st.integers(1, 3000),
                          st.booleans()), min_size=1, max_size=6))
# A node that bound a slot itself (with the highest epoch) gave it up to a
# lower epoch's claim: an earlier owner's "not claiming" mark was still on it.
@example([(0, 11179, 546, False), (0, 484, 3000, True), (1, 8632, 611, True),
          (1, 1909, 2860, False), (2, 84, 2132, True), (1, 2791, 1440, False)])
def test_random_claims_keep_the_invariants_and_converge(claims):
    """SETSLOT NODE / ADDSLOTS-like claims by masters, some with a new epoch;
    a master that loses every slot turns replica and claims no more."""
    net = Net(3)
    net.form(slots=False)
    for who, start, length, bump in claims:
        n = net[who]
        if n.me.is_replica:
            continue
        for s in range(start, min(start + length, SLOTS)):
            n.topology.assign(s, n.me)
        if bump:
            n.state.bump_epoch()
        net.call(n.state.claim_slots_changed)
        net.run(300)  # checks the invariants on every node at every step

    net.run_until(lambda: owner_names(net[0]) == owner_names(net[1]) == owner_names(net[2])
                  and epochs_settled(net), 20_000)
    for n in net.nodes:
        for node in n.topology.nodes.values():
            assert node.numslots == 0 or node.is_master
