"""CLUSTER commands in process: an engine in cluster mode with a
:class:`~tidelog.cluster.control.Control` attached, over a hand-built
:class:`~tidelog.cluster.nodes.Topology`.

``StandInState`` takes the state machine's place (``cluster/state.py``'s
``ClusterState``) for Control's calls until that module is on main: it
records each call and makes the change to the node table the call stands
for, nothing more (no bus, no actions).  ``make_state`` gives the real
state machine once it exists."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tests.support.engine_harness import Harness
from tidelog.cluster.control import Control
from tidelog.cluster.messages import MASTER, MYSELF, TYPE_NAMES
from tidelog.cluster.nodes import Node, Topology, random_name
from tidelog.cluster.routing import Router


class StandInState:
    def __init__(self, topology: Topology, node_timeout: int = 15000) -> None:
        self.topology = topology
        self.settings = SimpleNamespace(node_timeout=node_timeout)
        self.stats_sent = [0] * len(TYPE_NAMES)
        self.stats_received = [0] * len(TYPE_NAMES)
        self.calls: list[tuple[Any, ...]] = []

    def meet(self, ip: bytes, port: int, cport: int, now: int) -> None:
        self.calls.append(("meet", ip, port, cport))

    def forget(self, node: Node, now: int) -> None:
        self.calls.append(("forget", node.name))
        self.topology.remove_node(node)

    def replicate(self, master: Node, now: int) -> None:
        self.calls.append(("replicate", master.name))
        self.topology.migrating_to.clear()
        self.topology.importing_from.clear()
        self.topology.set_master(self.topology.myself, master)

    def reset(self, hard: bool, now: int) -> None:
        self.calls.append(("reset", hard))

    def failover(self, mode: str, now: int) -> None:
        self.calls.append(("failover", mode))

    def bump_epoch(self) -> bool:
        """Redis's clusterBumpConfigEpochWithoutConsensus."""
        t = self.topology
        top = max([t.current_epoch, *(n.config_epoch for n in t.nodes.values())])
        bumped = t.myself.config_epoch == 0 or t.myself.config_epoch != top
        if bumped:
            t.current_epoch += 1
            t.myself.config_epoch = t.current_epoch
        self.calls.append(("bump_epoch", bumped))
        return bumped

    def broadcast_pong(self, local_replicas_only: bool, now: int) -> None:
        self.calls.append(("broadcast_pong", local_replicas_only))

    def save_config(self, fsync: bool) -> None:
        self.calls.append(("save_config", fsync))

    def update_state(self, now: int) -> None:
        self.calls.append(("update_state",))

    def claim_slots_changed(self) -> None:
        self.calls.append(("claim_slots_changed",))

    def publish(self, channel: bytes, message: bytes, shard: bool) -> None:
        self.calls.append(("publish", channel, message, shard))


def make_myself(port: int = 7000, ip: bytes = b"127.0.0.1", cport: int | None = None) -> Node:
    me = Node(random_name(), MYSELF | MASTER, ip=ip, port=port,
              cport=port + 10000 if cport is None else cport)
    me.shard_id = random_name()
    return me


class ClusterHarness(Harness):
    """An engine in cluster mode (a router and a Control over ``topology``)."""

    def __init__(self, myself: Node | None = None) -> None:
        super().__init__()
        self.engine.config.set("cluster-enabled", "yes", at_startup=True)
        self.me = myself or make_myself()
        self.topology = Topology(self.me)
        self.topology.slot_stats = self.engine.slot_stats  # as the shell attaches them
        self.state = StandInState(self.topology)
        self.control = Control(self.topology, self.state)
        self.engine.cluster = self.control
        self.engine.set_slot_router(Router(self.topology))
