"""A master's slot claim (ClusterState.update_slots_with, Redis's
clusterUpdateSlotsConfigWith) visits only the slots where the claim and the
claimer's bitmap here differ; ``slots_of`` reads a bitmap 64 slots at a
time.  Both are checked against the plain slot-by-slot reading over many
random slot maps: same owners, same slots awaiting a claim, same actions,
same master followed.
"""

from __future__ import annotations

import random

import pytest

from tidelog.cluster.actions import DeleteSlotKeys, Replicate
from tidelog.cluster.messages import MASTER, MYSELF, SLAVE, bitmap_of, slot_bit, slots_of
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.state import ClusterSettings, ClusterState
from tidelog.keyslot import SLOTS

NOW = 1_000_000


def plain_slots_of(bitmap: bytes) -> list[int]:
    return [slot for slot in range(SLOTS) if slot_bit(bitmap, slot)]


@pytest.mark.parametrize("seed", range(20))
def test_slots_of_reads_every_bit(seed):
    rng = random.Random(seed)
    density = rng.choice([0.0, 0.001, 0.1, 0.5, 1.0])
    wanted = [s for s in range(SLOTS) if rng.random() < density]
    bitmap = bitmap_of(wanted)
    assert slots_of(bitmap) == plain_slots_of(bitmap) == wanted
    assert slots_of(bytearray(bitmap)) == wanted


def plain_update(state: ClusterState, sender: Node, epoch: int, slots: bytes, now: int) -> None:
    """The slot-by-slot reading (what update_slots_with did before)."""
    topology = state.topology
    myself = topology.myself
    current_master = topology.master_of(myself)
    owners = topology.owners
    new_master = None
    claimed = migrated = 0
    lost: list[int] = []
    for slot in range(SLOTS):
        owner = owners[slot]
        if slot_bit(slots, slot):
            claimed += 1
            if owner is sender:
                state.owner_not_claiming.pop(slot, None)
                continue
            if slot in topology.importing_from:
                continue
            if owner is None or state.not_claimed(slot, owner) or owner.config_epoch < epoch:
                if owner is myself:
                    lost.append(slot)
                if owner is current_master:
                    new_master = sender
                    migrated += 1
                topology.assign(slot, sender)
                state.owner_not_claiming.pop(slot, None)
                state.later(update=True, save=True, fsync=True)
        elif owner is sender:
            state.owner_not_claiming[slot] = sender
    if (new_master is not None and current_master.numslots == 0
            and (state.settings.allow_replica_migration or claimed == migrated)):
        state.follow(sender, now)
        state.later(update=True, save=True, fsync=True)
    elif (myself.master is not None and myself.master.master is not None
          and myself.master.master is not myself):
        state.follow(myself.master.master, now)
        state.later(update=True, save=True, fsync=True)
    elif lost:
        state.outbox.append(DeleteSlotKeys(lost))


def random_state(seed: int) -> tuple[ClusterState, Node, int, bytes]:
    """A node's view (myself a master or a replica, three other masters),
    a random slot map, open slots and slots awaiting a claim, and a claim
    by one of the masters, near its bitmap here or anything."""
    rng = random.Random(seed)
    replica = rng.random() < 0.3
    me = Node(name=b"a" * 40, flags=MYSELF | (SLAVE if replica else MASTER), ctime=NOW,
              config_epoch=rng.randrange(1, 6))
    topology = Topology(me)
    topology.add_node(me)
    masters = []
    for name in (b"b", b"c", b"d"):
        node = Node(name=name * 40, flags=MASTER, ctime=NOW, config_epoch=rng.randrange(1, 6))
        topology.add_node(node)
        masters.append(node)
    if replica:
        topology.set_master(me, masters[0])
    owners = [None, *masters] if replica else [None, me, *masters]
    for slot in range(SLOTS):
        owner = rng.choice(owners)
        if owner is not None:
            topology.assign(slot, owner)
    state = ClusterState(topology, ClusterSettings(allow_replica_migration=rng.random() < 0.5),
                         NOW, rng=random.Random(seed))
    # marks of the slot's owner here, and stale ones (of a node that no longer owns it)
    state.owner_not_claiming = {
        slot: topology.owners[slot] if rng.random() < 0.7 else rng.choice(masters)
        for slot in (rng.randrange(SLOTS) for _ in range(rng.randrange(50)))
        if topology.owners[slot] is not None}
    for _ in range(rng.randrange(50)):
        topology.importing_from[rng.randrange(SLOTS)] = rng.choice(masters)
    sender = rng.choice(masters)
    how = rng.random()
    if how < 0.4:  # its bitmap here with a few slots flipped
        claim = bytearray(sender.slots)
        for _ in range(rng.randrange(1, 20)):
            slot = rng.randrange(SLOTS)
            claim[slot >> 3] ^= 1 << (slot & 7)
    elif how < 0.6:  # everything mine, or everything my master's
        claim = bytearray(topology.master_of(me).slots)
    else:
        claim = bytearray(rng.randbytes(SLOTS // 8))
    return state, sender, rng.randrange(0, 8), bytes(claim)


def _comparable(action: object) -> object:
    """An action as the two states' runs can compare it: a node by its name
    (each run has its own node objects)."""
    if isinstance(action, Replicate):
        return ("replicate", None if action.master is None else action.master.name)
    return action


def outcome(state: ClusterState) -> tuple:
    topology = state.topology
    return ([None if o is None else o.name for o in topology.owners],
            {name: (bytes(n.slots), n.numslots) for name, n in topology.nodes.items()},
            sorted((slot, node.name) for slot, node in state.owner_not_claiming.items()),
            [_comparable(a) for a in state.drain() if not hasattr(a, "text")],  # the log lines aside
            getattr(topology.myself.master, "name", None),
            state.todo)


@pytest.mark.parametrize("seed", range(60))
def test_a_claim_reads_as_slot_by_slot(seed):
    ours, sender, epoch, claim = random_state(seed)
    plain, plain_sender, _, _ = random_state(seed)
    ours.update_slots_with(sender, epoch, claim, NOW)
    plain_update(plain, plain_sender, epoch, claim, NOW)
    assert outcome(ours) == outcome(plain)
