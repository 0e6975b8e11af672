"""Replica elections, manual failovers and UPDATE in an in-memory network of
real cluster state machines (tidelog.cluster.state and .failover over
tests/support/cluster_net.py), with Redis 7.0.15's semantics
(clusterHandleSlaveFailover, clusterGetSlaveRank,
clusterSendFailoverAuthIfNeeded, clusterHandleManualFailover,
clusterUpdateSlotsConfigWith).  Replicas follow their master's offset at
every step unless a test freezes them."""

from __future__ import annotations

import pytest

from tests.support.cluster_net import Net, NetNode
from tidelog.cluster.actions import Log, PauseWrites
from tidelog.cluster.messages import (
    FAIL_FLAG,
    FAILOVER_AUTH_ACK,
    FAILOVER_AUTH_REQUEST,
    MFSTART,
    NOFAILOVER,
    UPDATE,
)
from tidelog.keyslot import SLOTS

from .test_cluster_state import TIMEOUT, epochs_settled, shards

M0_SLOTS = range(0, SLOTS // 3)


def master_everywhere(net: Net, new: NetNode, slots: range) -> bool:
    """``new`` is a master serving ``slots`` in the view of every live node."""
    for n in net.live():
        node = n.view(new)
        if node is None or not node.is_master:
            return False
        owners = n.topology.owners
        if any(owners[s] is not node for s in (slots[0], slots[-1])):
            return False
    return True


def replica_everywhere(net: Net, replica: NetNode, master: NetNode) -> bool:
    for n in net.live():
        node = n.view(replica)
        if node is None or node.master is None or node.master.name != master.name:
            return False
    return True


# -- 5. election ---------------------------------------------------------------------------
def test_replica_of_a_failed_master_is_elected():
    net = shards(3, 1)  # replicas: 3 of 0, 4 of 1, 5 of 2
    old, r = net[0], net[3]
    for n in net.nodes:
        n.state.set_repl_offset(1000 + n.index)
    net.run(300)
    epoch_before = max(n.me.config_epoch for n in net.nodes)
    net.down(old)
    net.run_until(lambda: master_everywhere(net, r, M0_SLOTS), 10 * TIMEOUT)
    assert r.me.config_epoch > epoch_before
    assert all(n.view(r).config_epoch == r.me.config_epoch for n in net.live())
    assert r.me.numslots == len(M0_SLOTS)
    assert r.replicates[-1].master is None  # serves as a master (REPLICAOF NO ONE)
    # one election: its request went once to each of the 4 other live nodes
    assert r.state.stats_sent[FAILOVER_AUTH_REQUEST] == 4
    # the votes of the two masters alive, each saved before it is sent
    assert sum(n.state.stats_sent[FAILOVER_AUTH_ACK] for n in net.live()) >= 2
    for voter in (net[1], net[2]):
        assert voter.topology.last_vote_epoch == r.me.config_epoch
    # replicas of the other masters do not vote
    assert all(n.state.stats_sent[FAILOVER_AUTH_ACK] == 0 for n in (net[4], net[5]))
    net.run_until(lambda: all(n.topology.state_ok for n in net.live()), 5000)

    # the old master comes back: the newer claim wins and it replicates the winner
    net.up(old)
    net.run_until(lambda: replica_everywhere(net, old, r), 5000)
    assert old.me.numslots == 0 and old.me.is_replica and old.me.master.name == r.name
    assert all(old.topology.owners[s] is old.me.master for s in (M0_SLOTS[0], M0_SLOTS[-1]))
    assert old.replicates[-1].master is not None and old.replicates[-1].master.name == r.name
    # a replica now: its FAIL is cleared as soon as it answers
    net.run_until(lambda: not any(n.view(old).flags & FAIL_FLAG for n in net.nodes), 2000)
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 5000)


def test_no_election_without_a_majority_of_masters():
    net = shards(3, 1)  # replicas: 3 of 0, 4 of 1, 5 of 2
    r = net[3]
    net.down(net[0])
    net.run_until(lambda: bool(r.view(net[0]).flags & FAIL_FLAG), 4 * TIMEOUT)
    # a second master goes before the election: one vote of the two needed at most
    net.down(net[1])
    net.run(8 * TIMEOUT)
    assert r.state.stats_sent[FAILOVER_AUTH_REQUEST] > 0  # it tried
    assert r.me.is_replica and all(n.view(r).is_replica for n in net.live())
    assert any("majority still not reached" in log.text or "attempt expired" in log.text
               for log in r.logs)
    assert not any(n.topology.state_ok for n in net.live())


def test_a_master_votes_once_per_epoch():
    net = shards(3, 1)
    voter = net[1]
    net.down(net[0])
    net.run_until(lambda: master_everywhere(net, net[3], M0_SLOTS), 10 * TIMEOUT)
    epoch = voter.topology.last_vote_epoch
    assert epoch == net[3].me.config_epoch
    # a request for an epoch already voted in is refused, and said so
    request = net[3].state.header(FAILOVER_AUTH_REQUEST)
    link = voter.view(net[3]).inbound_link
    before = voter.state.stats_sent[FAILOVER_AUTH_ACK]
    voter.state.on_message(link, request, net.now)
    assert voter.state.stats_sent[FAILOVER_AUTH_ACK] == before
    texts = [a.text for a in voter.state.drain() if isinstance(a, Log)]
    assert any(t.startswith("Failover auth denied") for t in texts)


# -- 6. rank -------------------------------------------------------------------------------
@pytest.mark.parametrize("better", [3, 4])
def test_the_replica_with_more_data_wins(better):
    net = shards(3, 2)  # replicas 3, 4 of master 0; 5, 6 of 1; 7, 8 of 2
    old = net[0]
    worse = 7 - better
    old.state.set_repl_offset(5000)
    net.run(200)
    net[better].frozen = net[worse].frozen = True
    net[better].state.set_repl_offset(4900)
    net[worse].state.set_repl_offset(3000)
    net.run(1000)  # the siblings learn each other's offsets from their pings
    net.down(old)
    net.run_until(lambda: master_everywhere(net, net[better], M0_SLOTS), 12 * TIMEOUT)
    # the other one follows the winner (its master lost every slot to it)
    net.run_until(lambda: replica_everywhere(net, net[worse], net[better]), 5000)
    assert any("rank #1" in log.text for log in net[worse].logs)
    assert any("rank #0" in log.text for log in net[better].logs)


def test_a_nofailover_replica_is_not_elected_nor_counted_in_the_rank():
    net = shards(3, 2)  # replicas 3, 4 of master 0
    old, keeper, other = net[0], net[3], net[4]
    keeper.state.settings.replica_no_failover = True
    old.state.set_repl_offset(5000)
    net.run(200)
    keeper.frozen = other.frozen = True
    keeper.state.set_repl_offset(5000)
    other.state.set_repl_offset(4000)
    net.run(1000)
    # CLUSTER NODES shows "nofailover" for it, on every node
    assert all(n.view(keeper).flags & NOFAILOVER for n in net.nodes)
    net.down(old)
    net.run_until(lambda: master_everywhere(net, other, M0_SLOTS), 12 * TIMEOUT)
    # more data than the other, but it may not fail over: rank 0 for the other
    assert any("rank #0" in log.text for log in other.logs)
    assert keeper.state.stats_sent[FAILOVER_AUTH_REQUEST] == 0
    net.run_until(lambda: replica_everywhere(net, keeper, other), 5000)


def test_a_replica_with_too_old_data_does_not_fail_over():
    net = shards(3, 1)
    old, r = net[0], net[3]
    net.down(old)
    # its link to the master has been down far longer than allowed
    # (repl-ping-replica-period x 1000 + node_timeout x cluster-replica-validity-factor)
    old.down_since -= 100_000
    net.run(8 * TIMEOUT)
    assert r.me.is_replica and all(n.view(r).is_replica for n in net.live())
    assert r.state.stats_sent[FAILOVER_AUTH_REQUEST] == 0
    assert any("Disconnected from master for longer than allowed" in log.text for log in r.logs)
    # with the factor 0 the age does not matter
    r.state.settings.replica_validity_factor = 0
    net.run_until(lambda: master_everywhere(net, r, M0_SLOTS), 10 * TIMEOUT)


# -- 7. manual failover ----------------------------------------------------------------------
def test_manual_failover_waits_for_the_offset_then_swaps_roles():
    net = shards(3, 1)
    m, r = net[0], net[3]
    m.state.set_repl_offset(2000)
    net.run(300)
    r.frozen = True
    m.state.set_repl_offset(2500)  # writes the replica has not processed yet
    net.run(300)
    assert r.state.repl_offset == 2000
    net.call(r.state.failover, "", net.now)
    started = net.now
    assert r.state.stats_sent[MFSTART] == 1
    assert len(m.pauses) == 1 and m.pauses[0].until > started
    net.run(1000)
    assert r.me.is_replica and m.me.is_master  # not before the offset is reached
    assert r.state.mf.master_offset == 2500
    r.frozen = False
    net.run_until(lambda: master_everywhere(net, r, M0_SLOTS), 3000)
    net.run_until(lambda: replica_everywhere(net, m, r), 3000)
    assert m.pauses[-1] == PauseWrites(0)
    # votes were granted though the master never failed
    assert not any(n.view(m).flags & FAIL_FLAG for n in net.nodes)
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 5000)


def test_a_sibling_follows_the_replica_promoted_by_a_manual_failover():
    net = shards(2, 2)  # replicas 2, 3 of master 0; 4, 5 of 1
    m, r, sibling = net[0], net[2], net[3]
    net.call(r.state.failover, "", net.now)
    net.run_until(lambda: master_everywhere(net, r, range(0, SLOTS // 2)), 3000)
    net.run_until(lambda: replica_everywhere(net, m, r) and replica_everywhere(net, sibling, r),
                  5000)
    assert sibling.replicates[-1].master is not None
    assert sibling.replicates[-1].master.name == r.name


def test_manual_failover_times_out_and_unpauses():
    net = shards(2, 1)  # replicas: 2 of 0, 3 of 1
    m, r = net[0], net[2]
    m.state.set_repl_offset(100)
    net.run(300)
    r.frozen = True
    m.state.set_repl_offset(200)
    net.call(r.state.failover, "", net.now)
    net.run(6000)
    assert r.me.is_replica and m.me.is_master
    assert m.pauses[0].until > 0 and m.pauses[-1] == PauseWrites(0)
    assert any("Manual failover timed out" in log.text for log in r.logs)


def test_forced_failover_with_the_master_down():
    net = shards(3, 1)
    m, r = net[0], net[3]
    net.down(m)
    net.call(r.state.failover, "force", net.now)
    took = net.run_until(lambda: master_everywhere(net, r, M0_SLOTS), 3000)
    # no wait for FAIL (node_timeout) nor for the election delay (500 ms and more)
    assert took <= 200
    assert r.state.stats_sent[FAILOVER_AUTH_REQUEST] == 4  # one request to each live node


def test_takeover_needs_no_election():
    net = shards(3, 1)
    m, r = net[0], net[3]
    net.run_until(lambda: epochs_settled(net), 5000)
    net.call(r.state.failover, "takeover", net.now)
    assert r.me.is_master and r.me.numslots == len(M0_SLOTS)
    # the greatest config epoch of all (bumped unless it was so already, as
    # clusterBumpConfigEpochWithoutConsensus: then a collision may follow)
    assert r.me.config_epoch == r.state.max_epoch() > m.me.config_epoch
    net.run_until(lambda: master_everywhere(net, r, M0_SLOTS), 3000)
    net.run_until(lambda: replica_everywhere(net, m, r), 3000)
    assert r.state.stats_sent[FAILOVER_AUTH_REQUEST] == 0
    assert all(n.state.stats_sent[FAILOVER_AUTH_ACK] == 0 for n in net.nodes)
    net.run_until(lambda: epochs_settled(net), 5000)  # a collision, if any, resolved
    assert master_everywhere(net, r, M0_SLOTS)


# -- 8. UPDATE -------------------------------------------------------------------------------
def test_a_stale_claim_gets_an_update_and_gives_the_slots_up():
    net = Net(3)
    net.form()
    a, b, c = net.nodes
    net.run_until(lambda: epochs_settled(net), 10_000)
    net.run(500)
    net.down(c)
    c_slots = range(2 * SLOTS // 3, SLOTS)
    moved = c_slots[: len(c_slots) // 2]
    for s in moved:
        a.topology.assign(s, a.me)
    a.state.bump_epoch()
    net.call(a.state.claim_slots_changed)
    net.run_until(lambda: all(b.topology.owners[s] is b.view(a) for s in (moved[0], moved[-1])),
                  2000)
    assert c.me.config_epoch < a.me.config_epoch
    net.up(c)
    net.run_until(lambda: net.owner_everywhere(moved[0], a) and net.owner_everywhere(moved[-1], a),
                  3000)
    assert sum(n.state.stats_sent[UPDATE] for n in (a, b)) >= 1
    assert c.state.stats_received[UPDATE] >= 1
    # c keeps what nobody took, deletes the keys of what it lost, stays a master
    assert c.me.is_master and c.me.numslots == len(c_slots) - len(moved)
    assert sorted({s for d in c.deletes for s in d.slots}) == list(moved)
    net.run(2000)
    assert all(n.view(c).numslots == len(c_slots) - len(moved) for n in net.nodes)
    net.run_until(lambda: all(n.topology.state_ok for n in net.nodes), 5000)


def test_an_update_from_a_third_node_corrects_a_stale_claim():
    # c cannot hear a, the new owner: only b's UPDATE about a tells it
    net = Net(3)
    net.form()
    a, b, c = net.nodes
    net.run_until(lambda: epochs_settled(net), 10_000)
    net.cut(a, c)
    net.down(c)
    slot = SLOTS - 1
    a.topology.assign(slot, a.me)
    a.state.bump_epoch()
    net.call(a.state.claim_slots_changed)
    net.run_until(lambda: b.topology.owners[slot] is b.view(a), 2000)
    net.up(c)
    net.run_until(lambda: c.topology.owners[slot] is c.view(a), 3000)
    assert b.state.stats_sent[UPDATE] >= 1 and c.state.stats_received[UPDATE] >= 1
    assert c.view(a).config_epoch == a.me.config_epoch
    assert [d.slots for d in c.deletes] == [[slot]]


def test_a_master_that_lost_every_slot_follows_the_new_owner():
    net = Net(3)
    net.form()
    a, b, c = net.nodes
    net.run_until(lambda: epochs_settled(net), 10_000)
    net.down(c)
    c_slots = range(2 * SLOTS // 3, SLOTS)
    for s in c_slots:
        b.topology.assign(s, b.me)
    b.state.bump_epoch()
    net.call(b.state.claim_slots_changed)
    net.run(500)
    net.up(c)
    net.run_until(lambda: replica_everywhere(net, c, b), 3000)
    assert c.me.numslots == 0 and c.replicates[-1].master.name == b.name
    assert c.state.stats_received[UPDATE] >= 1
