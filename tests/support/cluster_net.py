"""An in-memory network of cluster state machines (tidelog.cluster.state).

``Net(n)`` makes ``n`` real :class:`~tidelog.cluster.state.ClusterState`
instances, each with its own node table (myself at 127.0.0.1, port 7000+i,
bus port +10000) and a seeded random source, and plays their actions: a
``Connect`` opens a pair of links (unless the target is down: then
``on_link_failed``), a ``Send`` goes through the real bus codec (encoded
and decoded) to the other end, in FIFO order, a ``Close`` closes both ends.
The other actions are recorded per node.  The clock is simulated: ``step``
moves it by 100 ms and calls every live node's ``on_tick``; after each step
the node table invariants are checked on every live node.  ``tick`` and
``deliver`` do the same one piece at a time, so that a test chooses the
order in which waiting messages arrive (late, overtaken messages).

Replication is modelled by offsets: a replica told to ``Replicate(master)``
takes its master's offset at every step (unless ``frozen``), and its master
data age grows while that master is down.
"""

from __future__ import annotations

import operator
import random
from collections import deque
from collections.abc import Callable
from itertools import repeat

from tidelog.cluster import bus
from tidelog.cluster.actions import (
    Close,
    Connect,
    DeleteSlotKeys,
    Deliver,
    Link,
    Log,
    PauseWrites,
    Replicate,
    SaveConfig,
    Send,
)
from tidelog.cluster.messages import HANDSHAKE, MASTER, MYSELF
from tidelog.cluster.nodes import Node, Topology
from tidelog.cluster.state import ClusterSettings, ClusterState
from tidelog.keyslot import SLOTS

IP = b"127.0.0.1"
TICK_MS = 100
START_MS = 1_000_000


_EXPAND = [bytes((b >> bit) & 1 for bit in range(8)) for b in range(256)]
"""A bitmap byte as 8 bytes of 0/1, slot order (LSB first)."""


def check(t: Topology) -> None:
    """The node table's invariants (those of test_cluster_nodes.check,
    computed with C-speed passes over the slot map): each owner is in the
    table, its bitmap and count agree with the map, masters list their
    replicas."""
    table = set(t.nodes.values())
    for owner in set(t.owners):
        assert owner is None or owner in table, f"a slot owned by {owner!r}, not in the table"
    for node in table:
        if node.numslots == 0 and not any(node.slots):
            assert t.owners.count(node) == 0, "a slot owned by a node with no slots"
        else:
            owned = bytes(map(operator.is_, t.owners, repeat(node, SLOTS)))
            assert b"".join(map(_EXPAND.__getitem__, node.slots)) == owned, "bitmap != slot map"
            assert node.numslots == owned.count(1)
        for r in node.replicas:
            assert r.master is node and r.is_replica
    assert t.myself.flags & MYSELF and t.nodes.get(t.myself.name) is t.myself


class NetNode:
    """One node of the network: its state machine and what it was asked to do."""

    def __init__(self, index: int, port: int, state: ClusterState) -> None:
        self.index = index
        self.port = port
        self.cport = port + 10000
        self.state = state
        self.down = False
        self.down_since = 0
        self.frozen = False
        """Its offset does not follow its master's (a lagging replica)."""
        self.saves: list[SaveConfig] = []
        self.logs: list[Log] = []
        self.replicates: list[Replicate] = []
        self.deletes: list[DeleteSlotKeys] = []
        self.delivered: list[Deliver] = []
        self.pauses: list[PauseWrites] = []
        self.failed_connects = 0
        self.closed_while_down: list[Link] = []
        """Its links the peers closed while it was paused (it sees that on resuming)."""
        self.checked: object = None
        """The node table as it was when its invariants were last checked."""

    @property
    def topology(self) -> Topology:
        return self.state.topology

    @property
    def me(self) -> Node:
        return self.state.topology.myself

    @property
    def name(self) -> bytes:
        return self.state.topology.myself.name

    def view(self, other: NetNode) -> Node | None:
        """This node's record of ``other``."""
        return self.topology.nodes.get(other.name)

    def __repr__(self) -> str:
        return f"<NetNode {self.index} {self.name[:8].decode()}>"


class Net:
    def __init__(self, n: int, *, node_timeout: int = 1000, seed: int = 1,
                 names: list[bytes] | None = None) -> None:
        self.now = START_MS
        self.nodes: list[NetNode] = []
        self.ends: dict[Link, tuple[NetNode, NetNode, Link]] = {}
        """link -> (its owner, the other end's owner, the other end)."""
        self.queue: deque[tuple[NetNode, Link, bytes]] = deque()
        self.messages_sent = 0
        self.cuts: set[frozenset[NetNode]] = set()
        """Pairs of nodes that cannot reach each other (a partial partition)."""
        for i in range(n):
            port = 7000 + i
            name = names[i] if names else f"{i + 1:x}".encode() * 40
            me = Node(name=name, flags=MYSELF | MASTER, ctime=self.now, ip=IP, port=port,
                      cport=port + 10000)
            state = ClusterState(Topology(me), ClusterSettings(node_timeout=node_timeout),
                                 self.now, rng=random.Random(seed * 1000 + i))
            self.nodes.append(NetNode(i, port, state))

    def __getitem__(self, i: int) -> NetNode:
        return self.nodes[i]

    def live(self) -> list[NetNode]:
        return [n for n in self.nodes if not n.down]

    def by_name(self, name: bytes) -> NetNode | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    # -- the wires -----------------------------------------------------------------------
    def _target(self, node: Node) -> NetNode | None:
        for n in self.nodes:
            if node.ip == IP and node.cport == n.cport:
                return n
        return None

    def _carry_out(self, src: NetNode, action: object) -> None:
        if isinstance(action, Send):
            ends = self.ends.get(action.link)
            if ends is None:
                return
            _, dst, other = ends
            if not dst.down:
                self.messages_sent += 1
                self.queue.append((dst, other, bus.encode(action.message)))
        elif isinstance(action, Connect):
            target = self._target(action.node)
            if target is None or target.down or frozenset((src, target)) in self.cuts:
                src.failed_connects += 1
                src.state.on_link_failed(action.node, self.now)
                return
            out = Link(inbound=False, ctime=self.now, node=action.node, peer_ip=IP, local_ip=IP)
            inn = Link(inbound=True, ctime=self.now, peer_ip=IP, local_ip=IP)
            self.ends[out] = (src, target, inn)
            self.ends[inn] = (target, src, out)
            src.state.on_link_connected(out, self.now)
            target.state.on_link_connected(inn, self.now)
        elif isinstance(action, Close):
            ends = self.ends.pop(action.link, None)
            if ends is None:
                return
            _, dst, other = ends
            self.ends.pop(other, None)
            if dst.down:
                dst.closed_while_down.append(other)
            else:
                dst.state.on_link_closed(other, self.now)
        elif isinstance(action, SaveConfig):
            src.saves.append(action)
        elif isinstance(action, Log):
            src.logs.append(action)
        elif isinstance(action, Replicate):
            src.replicates.append(action)
        elif isinstance(action, DeleteSlotKeys):
            src.deletes.append(action)
        elif isinstance(action, Deliver):
            src.delivered.append(action)
        elif isinstance(action, PauseWrites):
            src.pauses.append(action)
        else:  # pragma: no cover - a new action kind
            raise AssertionError(f"unknown action {action!r}")

    def pump(self, limit: int = 200_000) -> None:
        """Carry out every action and deliver every message until all is quiet."""
        for _ in range(limit):
            busy = False
            for n in self.nodes:
                actions = n.state.drain()
                if n.down:
                    continue
                for action in actions:
                    busy = True
                    self._carry_out(n, action)
            if self.queue:
                dst, link, frame = self.queue.popleft()
                if not dst.down and link in self.ends:
                    dst.state.on_message(link, bus.decode(frame), self.now)
                continue
            if not busy:
                return
        raise AssertionError("the network never went quiet")

    # -- out of order ------------------------------------------------------------------
    def flush(self) -> None:
        """Carry out every node's queued actions without delivering anything:
        the messages they send wait in ``queue`` (see ``deliver``)."""
        busy = True
        while busy:
            busy = False
            for n in self.nodes:
                actions = n.state.drain()
                if n.down:
                    continue
                for action in actions:
                    busy = True
                    self._carry_out(n, action)

    def deliver(self, index: int) -> None:
        """Deliver the first waiting message on the link of the
        ``index``-th one, before those queued earlier on other links (they
        arrive late: overtaken, still in a socket buffer), then carry out
        what it caused.  A link stays in order, as a TCP connection."""
        link = self.queue[index][1]
        index = next(i for i, (_, other, _) in enumerate(self.queue) if other is link)
        dst, link, frame = self.queue[index]
        del self.queue[index]
        if not dst.down and link in self.ends:
            dst.state.on_message(link, bus.decode(frame), self.now)
        self.flush()
        self.check()

    def tick(self) -> None:
        """``step`` without delivering: the clock moves, every live node's
        timer runs, what it sends waits in ``queue``."""
        self.now += TICK_MS
        self._follow_offsets()
        for n in self.live():
            n.state.on_tick(self.now)
        self.flush()
        self.check()

    # -- the clock -----------------------------------------------------------------------
    def _follow_offsets(self) -> None:
        for n in self.live():
            if not n.me.is_replica or n.state.replicating is None:
                continue
            master = self.by_name(n.state.replicating.name)
            if master is None:
                continue
            if master.down:
                n.state.set_master_data_age(self.now - master.down_since)
            else:
                n.state.set_master_data_age(0)
                if not n.frozen:
                    n.state.set_repl_offset(master.state.repl_offset)

    def step(self) -> None:
        self.now += TICK_MS
        self._follow_offsets()
        for n in self.live():
            n.state.on_tick(self.now)
            self.pump()
        self.check()

    def run(self, ms: int) -> None:
        for _ in range(ms // TICK_MS):
            self.step()

    def run_until(self, done: Callable[[], bool], limit_ms: int = 30_000) -> int:
        """Step until ``done()``; returns the simulated ms it took (fails past ``limit_ms``)."""
        start = self.now
        while not done():
            assert self.now - start <= limit_ms, "not reached in time"
            self.step()
        return self.now - start

    def check(self) -> None:
        """The invariants on every live node whose table changed since it was last checked."""
        for n in self.live():
            t = n.topology
            seen = (tuple(t.owners), t.myself,
                    tuple((name, node, node.name, bytes(node.slots), node.numslots, node.flags,
                           node.master, tuple(node.replicas)) for name, node in t.nodes.items()))
            if n.checked != seen:
                check(t)
                n.checked = seen

    # -- what a test does --------------------------------------------------------------------
    def call(self, fn: Callable[..., object], *args: object) -> None:
        """A state entry point called outside a tick (a CLUSTER command), then the network."""
        fn(*args)
        self.pump()
        self.check()

    def meet(self, a: NetNode, b: NetNode) -> None:
        self.call(a.state.meet, IP, b.port, b.cport, self.now)

    def assign(self, n: NetNode, slots: range | list[int]) -> None:
        """ADDSLOTS on ``n``."""
        for s in slots:
            n.topology.assign(s, n.me)
        self.call(n.state.claim_slots_changed)

    def down(self, n: NetNode, *, close_links: bool = True) -> None:
        """The node stops: its links close and it gets nothing any more.
        ``close_links=False``: a paused process (its links stay open, what is
        sent to it is lost, connecting to it fails)."""
        n.down, n.down_since = True, self.now
        for link, (owner, other_owner, other) in list(self.ends.items()):
            if not close_links:
                break
            if owner is n and link in self.ends:
                del self.ends[link]
                self.ends.pop(other, None)
                n.state.on_link_closed(link, self.now)
                if not other_owner.down:
                    other_owner.state.on_link_closed(other, self.now)
        n.state.drain()
        self.pump()

    def cut(self, a: NetNode, b: NetNode) -> None:
        """``a`` and ``b`` cannot reach each other any more (both still reach
        the others): their links close and connecting fails."""
        self.cuts.add(frozenset((a, b)))
        for link, (owner, other_owner, other) in list(self.ends.items()):
            if {owner, other_owner} == {a, b} and link in self.ends:
                del self.ends[link]
                self.ends.pop(other, None)
                owner.state.on_link_closed(link, self.now)
                other_owner.state.on_link_closed(other, self.now)
        self.pump()

    def up(self, n: NetNode) -> None:
        n.down = False
        n.state.drain()
        for link in n.closed_while_down:
            n.state.on_link_closed(link, self.now)
        n.closed_while_down.clear()
        self.pump()

    def form(self, *, slots: bool = True, settle_ms: int = 8000) -> None:
        """Meet every node from the first, spread the 16384 slots over the
        masters, and wait until every node knows every other."""
        first = self.nodes[0]
        for other in self.nodes[1:]:
            self.meet(first, other)
        self.run_until(self.everyone_knows_everyone, settle_ms)
        if slots:
            self.spread_slots(self.nodes)

    def spread_slots(self, masters: list[NetNode]) -> None:
        k = len(masters)
        for i, n in enumerate(masters):
            self.assign(n, range(i * SLOTS // k, (i + 1) * SLOTS // k))

    def everyone_knows_everyone(self) -> bool:
        names = {n.name for n in self.live()}
        for n in self.live():
            known = {name for name, node in n.topology.nodes.items() if not node.flags & HANDSHAKE}
            if not names <= known or any(node.flags & HANDSHAKE
                                         for node in n.topology.nodes.values()):
                return False
        return True

    def owner_everywhere(self, slot: int, owner: NetNode) -> bool:
        for n in self.live():
            node = n.topology.owners[slot]
            if node is None or node.name != owner.name:
                return False
        return True
