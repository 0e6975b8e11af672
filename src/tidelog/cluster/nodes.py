"""The node table and the slot map: what one node knows of its cluster.

Plain data, no I/O and no clock of its own (times are milliseconds passed
in by the caller).  :mod:`tidelog.cluster.state` changes it as bus messages
and CLUSTER commands arrive; the texts (CLUSTER NODES, SLOTS, SHARDS,
INFO, nodes.conf) and the routing of commands read it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..keyslot import SLOTS
from ..slotstats import SlotStats
from .messages import MASTER, MIGRATE_TO, MYSELF, SLAVE, SLOT_BITMAP_LEN


def random_name() -> bytes:
    """A new node id (or shard id): 40 random hex characters."""
    return os.urandom(20).hex().encode()


@dataclass(slots=True, eq=False)
class Node:
    """One node of the cluster, this one included (flag MYSELF).

    Times are in milliseconds; 0 means never.  ``master`` is the node this
    one replicates (None for a master); ``replicas`` the nodes replicating
    this one.  ``slots`` is the bitmap of the slots it serves as a master
    (as in the bus header), ``numslots`` their number.  ``fail_reports``
    maps a reporting master's name to the time of its last report.
    """

    name: bytes
    flags: int
    ctime: int = 0
    ip: bytes = b""
    port: int = 0
    cport: int = 0
    pport: int = 0
    hostname: bytes = b""
    human_nodename: bytes = b""
    shard_id: bytes = b""
    config_epoch: int = 0
    master: Node | None = None
    replicas: list[Node] = field(default_factory=list)
    slots: bytearray = field(default_factory=lambda: bytearray(SLOT_BITMAP_LEN))
    numslots: int = 0
    ping_sent: int = 0
    pong_received: int = 0
    data_received: int = 0
    fail_time: int = 0
    voted_time: int = 0
    repl_offset_time: int = 0
    orphaned_time: int = 0
    repl_offset: int = 0
    fail_reports: dict[bytes, int] = field(default_factory=dict)
    link: object | None = None
    """The outbound bus link the shell opened to this node, if any."""
    inbound_link: object | None = None
    """The link this node opened to us, once it is known to be this node's."""

    @property
    def is_master(self) -> bool:
        return bool(self.flags & MASTER)

    @property
    def is_replica(self) -> bool:
        return bool(self.flags & SLAVE)

    @property
    def is_myself(self) -> bool:
        return bool(self.flags & MYSELF)

    def has_slot(self, slot: int) -> bool:
        """Cost: O(1)."""
        return bool(self.slots[slot >> 3] & (1 << (slot & 7)))


@dataclass(slots=True, eq=False)
class Topology:
    """The node table, the slot map and the epochs of one node's view.

    ``owners[s]`` is the master serving slot ``s`` (None: unassigned);
    ``migrating_to[s]`` / ``importing_from[s]`` are this node's open slots
    (CLUSTER SETSLOT MIGRATING / IMPORTING).  ``forgotten`` maps the name of
    a node removed by CLUSTER FORGET to the time (ms) until which gossip
    about it is ignored.
    """

    myself: Node
    nodes: dict[bytes, Node] = field(default_factory=dict)
    owners: list[Node | None] = field(default_factory=lambda: [None] * SLOTS)
    migrating_to: dict[int, Node] = field(default_factory=dict)
    importing_from: dict[int, Node] = field(default_factory=dict)
    current_epoch: int = 0
    last_vote_epoch: int = 0
    state_ok: bool = False
    size: int = 0
    """Masters serving at least one slot (the quorum's base), as of the last state update."""
    forgotten: dict[bytes, int] = field(default_factory=dict)
    slot_stats: SlotStats | None = None
    """The engine's per-slot counters (CLUSTER SLOT-STATS): a slot's go to
    zero when it changes owner."""

    def __post_init__(self) -> None:
        self.nodes.setdefault(self.myself.name, self.myself)

    # -- nodes ------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """Cost: O(1)."""
        self.nodes[node.name] = node

    def remove_node(self, node: Node) -> None:
        """Forget ``node``: its slots become unassigned, its replicas lose
        their master, failure reports it made are dropped.  Cost: O(16384 +
        nodes)."""
        for slot in range(SLOTS):
            if self.owners[slot] is node:
                self.owners[slot] = None
                if self.slot_stats is not None:
                    self.slot_stats.reset_slot(slot)
            if self.migrating_to.get(slot) is node:
                del self.migrating_to[slot]
            if self.importing_from.get(slot) is node:
                del self.importing_from[slot]
        for other in self.nodes.values():
            other.fail_reports.pop(node.name, None)
            if other.master is node:
                other.master = None
        if node.master is not None:
            _remove_replica(node.master, node)
        self.nodes.pop(node.name, None)

    def rename(self, node: Node, name: bytes) -> None:
        """Give a handshake node the name its peer announced. Cost: O(1)."""
        self.nodes.pop(node.name, None)
        node.name = name
        self.nodes[name] = node

    def set_master(self, node: Node, master: Node | None) -> None:
        """Make ``node`` a replica of ``master`` (None: a master).  A master
        that gets a replica is flagged MIGRATE_TO (a target of replica
        migration once orphaned), one left with none loses the flag.
        Cost: O(replicas)."""
        if node.master is not None:
            _remove_replica(node.master, node)
        node.master = master
        if master is None:
            node.flags = (node.flags & ~SLAVE) | MASTER
        else:
            node.flags = (node.flags & ~MASTER) | SLAVE
            if node not in master.replicas:
                master.replicas.append(node)
                master.flags |= MIGRATE_TO

    # -- slots ------------------------------------------------------------

    def assign(self, slot: int, node: Node) -> None:
        """Bind ``slot`` to ``node`` (unbinding it from its owner).  A node
        getting its first slot while some master has replicas is flagged
        MIGRATE_TO: a new master is a valid target of replica migration
        unless the whole cluster is without replicas (as Redis does since
        its issue 3043).  Cost: O(1); O(nodes) for a node's first slot."""
        old = self.owners[slot]
        if old is node:
            return
        if old is not None:
            old.slots[slot >> 3] &= ~(1 << (slot & 7)) & 0xFF
            old.numslots -= 1
        self.owners[slot] = node
        node.slots[slot >> 3] |= 1 << (slot & 7)
        node.numslots += 1
        if self.slot_stats is not None:
            self.slot_stats.reset_slot(slot)
        if node.numslots == 1 and self.masters_have_replicas():
            node.flags |= MIGRATE_TO

    def masters_have_replicas(self) -> bool:
        """Whether any master has a replica. Cost: O(nodes)."""
        return any(n.replicas for n in self.nodes.values() if not n.flags & SLAVE)

    def unassign(self, slot: int) -> Node | None:
        """Make ``slot`` unassigned; returns its former owner. Cost: O(1)."""
        old = self.owners[slot]
        if old is not None:
            old.slots[slot >> 3] &= ~(1 << (slot & 7)) & 0xFF
            old.numslots -= 1
            self.owners[slot] = None
            if self.slot_stats is not None:
                self.slot_stats.reset_slot(slot)
        return old

    def slot_ranges(self, node: Node) -> list[tuple[int, int]]:
        """The slots ``node`` serves as ascending (first, last) ranges. Cost: O(16384)."""
        ranges: list[tuple[int, int]] = []
        start = -1
        for slot in range(SLOTS + 1):
            owned = slot < SLOTS and self.owners[slot] is node
            if owned and start < 0:
                start = slot
            elif not owned and start >= 0:
                ranges.append((start, slot - 1))
                start = -1
        return ranges

    def master_of(self, node: Node) -> Node:
        """The master of ``node``'s shard: itself if a master. Cost: O(1)."""
        return node.master if node.master is not None else node


def _remove_replica(master: Node, replica: Node) -> None:
    """Take ``replica`` off ``master``'s list; a master left without
    replicas is no target of replica migration any more. Cost: O(replicas)."""
    if replica in master.replicas:
        master.replicas.remove(replica)
        if not master.replicas:
            master.flags &= ~MIGRATE_TO
