"""CLUSTER's subcommands in cluster mode: their rules and Redis's errors.

:class:`Control` is what the CLUSTER handlers call (it implements
:class:`tidelog.commands.contract.Cluster`; the shell attaches one as
``engine.cluster`` at start-up).  The handlers read the arguments; Control
checks what Redis 7.0.15's clusterCommand checks, in its order, with its
texts (all in :mod:`tidelog.errors`), then changes the node table
(:class:`~tidelog.cluster.nodes.Topology`) itself where the change is plain
bookkeeping (slot ownership, open slots, the config epoch set by hand), or
asks the state machine (:class:`ClusterOps`) for what involves the bus:
meeting a node, forgetting one, following a master, resetting, failing over,
bumping the epoch, saving nodes.conf.  Reading commands (INFO, NODES, SLOTS,
SHARDS, LINKS) come from :mod:`tidelog.cluster.texts`.

Times are the bus's: wall-clock milliseconds, from the engine's clock.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .. import errors
from ..commands.contract import Cluster, Ctx
from ..errors import CommandError
from ..keyslot import SLOTS, key_slot
from ..keyspace import Database, SlotKeyIndex
from ..resp.replies import Push
from ..types.pubsub import SHARD
from . import texts
from .messages import FAIL_FLAG
from .nodes import Node, Topology, random_name

FAIL_REPORT_VALIDITY_MULT = 2
"""A failure report counts for node_timeout x this (Redis's CLUSTER_FAIL_REPORT_VALIDITY_MULT)."""


class ClusterOps(Protocol):
    """What Control asks of the state machine
    (:class:`tidelog.cluster.state.ClusterState`): each call changes its
    topology and queues the actions that follow (messages, a nodes.conf
    save, a new master for the replication)."""

    settings: Any  # node_timeout (ms) is read
    stats_sent: Any  # messages sent, indexed by type
    stats_received: Any

    def meet(self, ip: bytes, port: int, cport: int, now: int) -> Any:
        """Start a handshake with ip:port (bus port cport), unless one is under way."""
        ...

    def forget(self, node: Node, now: int) -> Any:
        """Remove ``node`` and ignore gossip about it for a minute."""
        ...

    def replicate(self, master: Node, now: int) -> Any:
        """Make this node a replica of ``master`` (Redis's clusterSetMaster)."""
        ...

    def reset(self, hard: bool, now: int) -> Any:
        """CLUSTER RESET's change of the node table (the data is Control's)."""
        ...

    def failover(self, mode: str, now: int) -> Any:
        """Start a manual failover: ``""``, ``"force"`` or ``"takeover"``."""
        ...

    def bump_epoch(self) -> bool:
        """A new config epoch without consensus, when this node's is 0 or
        not the unique greatest; True if it changed."""
        ...

    def broadcast_pong(self, local_replicas_only: bool, now: int) -> Any:
        """A PONG to every node (or to this shard's replicas only): they
        see this node's epoch and slots now, not at their next ping."""
        ...

    def save_config(self, fsync: bool) -> Any: ...
    def update_state(self, now: int) -> Any: ...

    def claim_slots_changed(self) -> Any:
        """Slots or open slots changed by a command: save, update the
        state, tell the other nodes soon."""
        ...

    def publish(self, channel: bytes, message: bytes, shard: bool) -> Any:
        """A PUBLISH (SPUBLISH: ``shard``) for the other nodes."""
        ...


def _database(ctx: Ctx) -> Database:
    """Cluster mode's one database."""
    return ctx.engine.dbs[0]


def _plain(ctx: Ctx) -> bool:
    """Whether the client is given the nodes' plain ports: under tls-cluster
    yes, a client of a connection not on the TLS port (7.0.15's use_pport; a
    script's calls, on no connection, are given the TLS ports)."""
    client = ctx.client
    return bool(ctx.config["tls-cluster"]) and client is not None and client.fd >= 0 \
        and not client.tls


class Control:
    """The CLUSTER subcommands over ``topology`` and ``state``.

    The shell may set ``save_now`` (write nodes.conf at once, raising
    OSError: SAVECONFIG's error) and ``kick`` (carry out the state machine's
    actions soon, after a command queued some); ``links_buffer_limit_exceeded``
    is the shell's count of links closed for cluster-link-sendbuf-limit."""

    def __init__(self, topology: Topology, state: ClusterOps) -> None:
        self.topology = topology
        self.state = state
        self.save_now: Callable[[], None] | None = None
        self.kick: Callable[[], None] | None = None
        self.links_buffer_limit_exceeded = 0

    # -- helpers ---------------------------------------------------------------------
    def _done(self) -> None:
        """A command queued work for the bus: have it carried out soon."""
        if self.kick is not None:
            self.kick()

    def _lookup(self, name: bytes) -> Node | None:
        """The node of that id (Redis's clusterLookupNode). O(1)."""
        return self.topology.nodes.get(name)

    def _serves(self, owner: Node | None) -> bool:
        """Whether this node serves ``owner``'s slots: it is that shard's
        master or one of its replicas (Redis's clusterGetNodesServingMySlots)."""
        if owner is None:
            return False
        primary, myself = self.topology.master_of(owner), self.topology.myself
        return primary is myself or myself.master is primary

    def _drop_shard_channels(self, ctx: Ctx, slots: set[int]) -> None:
        """Slots this node served were unassigned: the clients subscribed to
        their shard channels are unsubscribed, each told with a
        ``sunsubscribe`` message (Redis's removeChannelsInSlot).
        O(shard channels)."""
        if not slots:
            return
        registry = ctx.engine.pubsub
        for channel in [c for c in registry.shard_channels if key_slot(c) in slots]:
            for client in list(registry.shard_channels[channel]):
                client.pubsub = registry.unsubscribe(client, SHARD, channel)
                left = 0 if client.pubsub is None else len(client.pubsub.kinds[SHARD])
                client.send(Push([b"sunsubscribe", channel, left]))

    def _node_timeout(self) -> int:
        return int(getattr(self.state.settings, "node_timeout", 15000))

    # -- the protocol ------------------------------------------------------------------
    def require(self) -> None:
        """Cluster mode is on. O(1)."""

    def add_slots(self, ctx: Ctx, ranges: Iterable[tuple[int, int]], delete: bool) -> None:
        """ADDSLOTS / DELSLOTS and their RANGE forms: every slot must be
        unassigned (assigned, to delete) and named once; then each is given
        to this node (or unassigned), an import of it ending.
        O(slots named + 16384)."""
        owners = self.topology.owners
        named = bytearray(SLOTS)
        for start, end in ranges:
            for slot in range(start, end + 1):
                if delete and owners[slot] is None:
                    raise errors.cluster_slot_unassigned(slot)
                if not delete and owners[slot] is not None:
                    raise errors.cluster_slot_busy(slot)
                if named[slot]:
                    raise errors.cluster_slot_repeated(slot)
                named[slot] = 1
        topology, myself = self.topology, self.topology.myself
        served: set[int] = set()
        for slot in range(SLOTS):
            if named[slot]:
                topology.importing_from.pop(slot, None)
                if delete:
                    if self._serves(owners[slot]):
                        served.add(slot)
                    topology.unassign(slot)
                else:
                    topology.assign(slot, myself)
        self._drop_shard_channels(ctx, served)
        self.state.claim_slots_changed()
        self._done()

    def flush_slots(self, ctx: Ctx) -> None:
        """FLUSHSLOTS: this node serves no slot any more (only while it holds
        no key). O(16384)."""
        if len(_database(ctx)):
            raise CommandError(errors.CLUSTER_FLUSHSLOTS_NOT_EMPTY)
        topology = self.topology
        served = set()
        for slot in range(SLOTS):
            if topology.owners[slot] is topology.myself:
                topology.unassign(slot)
                served.add(slot)
        self._drop_shard_channels(ctx, served)
        self.state.claim_slots_changed()
        self._done()

    def check_setslot(self) -> None:
        """SETSLOT is for masters (checked before its arguments). O(1)."""
        if self.topology.myself.is_replica:
            raise CommandError(errors.CLUSTER_SETSLOT_MASTERS_ONLY)

    def set_slot(self, ctx: Ctx, slot: int, action: bytes, node_id: bytes | None) -> None:
        """SETSLOT slot MIGRATING id | IMPORTING id | STABLE | NODE id.
        O(1), but NODE: O(keys of the slot) without the slot index."""
        topology, myself = self.topology, self.topology.myself
        if action == b"STABLE":
            topology.importing_from.pop(slot, None)
            topology.migrating_to.pop(slot, None)
        elif action in (b"MIGRATING", b"IMPORTING"):
            assert node_id is not None
            if action == b"MIGRATING" and topology.owners[slot] is not myself:
                raise errors.cluster_not_slot_owner(slot)
            if action == b"IMPORTING" and topology.owners[slot] is myself:
                raise errors.cluster_already_slot_owner(slot)
            node = self._lookup(node_id)
            if node is None:
                raise errors.cluster_dont_know_node(node_id)
            if node.is_replica:
                raise CommandError(errors.CLUSTER_TARGET_NOT_MASTER)
            if action == b"MIGRATING":
                topology.migrating_to[slot] = node
            else:
                topology.importing_from[slot] = node
        else:  # NODE
            assert node_id is not None
            node = self._lookup(node_id)
            if node is None:
                raise errors.cluster_unknown_node(node_id)
            if node.is_replica:
                raise CommandError(errors.CLUSTER_TARGET_NOT_MASTER)
            keys = self.count_keys_in_slot(ctx, slot)
            was_mine = topology.owners[slot] is myself
            if was_mine and node is not myself and keys:
                raise errors.cluster_slot_has_keys(slot)
            if not keys:  # a migration without keys left ends here
                topology.migrating_to.pop(slot, None)
            if self._serves(topology.owners[slot]):  # (even when it stays ours)
                self._drop_shard_channels(ctx, {slot})
            topology.assign(slot, node)
            if (was_mine and node is not myself and myself.numslots == 0
                    and ctx.config["cluster-allow-replica-migration"]):
                # a master left without slots follows their new owner
                self.state.replicate(node, ctx.now_ms())
            if node is myself and slot in topology.importing_from:
                # a slot moved by hand: a new epoch (without consensus) so
                # that this claim wins everywhere, told to every node at once
                # (a PONG to all, as Redis does): a node that imports next
                # must know it to take a greater one, else the old owner's
                # last ping, claiming the slot with it, takes the slot back
                self.state.bump_epoch()
                del topology.importing_from[slot]
                self.state.broadcast_pong(False, ctx.now_ms())
        self.state.claim_slots_changed()
        self._done()

    def meet(self, ctx: Ctx, ip: bytes, port: int, cport: int, port_arg: bytes) -> None:
        """MEET ip port [bus-port]: a handshake with a node at a valid IPv4 or
        IPv6 address (in its normal form) and ports; one already under way
        with that address is no error. O(nodes)."""
        normal = None
        for family in (socket.AF_INET, socket.AF_INET6):
            try:
                normal = socket.inet_ntop(family, socket.inet_pton(family, ip.decode("ascii")))
                break
            except (OSError, ValueError):  # (UnicodeDecodeError is a ValueError)
                continue
        if normal is None or not (0 < port <= 65535 and 0 < cport <= 65535):
            raise errors.cluster_bad_address(ip, port_arg)
        self.state.meet(normal.encode(), port, cport, ctx.now_ms())
        self._done()

    def forget(self, ctx: Ctx, node_id: bytes) -> None:
        """FORGET id: any node but this one and its master. O(16384 + nodes)."""
        node = self._lookup(node_id)
        if node is None:
            raise errors.cluster_unknown_node(node_id)
        myself = self.topology.myself
        if node is myself:
            raise CommandError(errors.CLUSTER_FORGET_MYSELF)
        if myself.is_replica and myself.master is node:
            raise CommandError(errors.CLUSTER_FORGET_MY_MASTER)
        self.state.forget(node, ctx.now_ms())
        self._done()

    def replicate(self, ctx: Ctx, node_id: bytes) -> None:
        """REPLICATE id: follow a master; a master must first hold no slot
        and no key. O(1)."""
        node = self._lookup(node_id)
        if node is None:
            raise errors.cluster_unknown_node(node_id)
        myself = self.topology.myself
        if node is myself:
            raise CommandError(errors.CLUSTER_REPLICATE_MYSELF)
        if node.is_replica:
            raise CommandError(errors.CLUSTER_REPLICATE_REPLICA)
        if myself.is_master and (myself.numslots or len(_database(ctx))):
            raise CommandError(errors.CLUSTER_REPLICATE_NOT_EMPTY)
        self.state.replicate(node, ctx.now_ms())
        self._done()

    def replicas(self, ctx: Ctx, node_id: bytes) -> list[bytes]:
        """REPLICAS id: the CLUSTER NODES line of each replica of a master.
        O(replicas x 16384)."""
        node = self._lookup(node_id)
        if node is None:
            raise errors.cluster_unknown_node(node_id)
        if node.is_replica:
            raise CommandError(errors.CLUSTER_REPLICAS_NOT_MASTER)
        plain = _plain(ctx)
        return [texts.node_line(self.topology, r, plain=plain).encode("latin-1")
                for r in node.replicas]

    def count_failure_reports(self, ctx: Ctx, node_id: bytes) -> int:
        """COUNT-FAILURE-REPORTS id: the reports about the node still valid
        (younger than twice the node timeout); older ones are dropped.
        O(reports)."""
        node = self._lookup(node_id)
        if node is None:
            raise errors.cluster_unknown_node(node_id)
        oldest = ctx.now_ms() - self._node_timeout() * FAIL_REPORT_VALIDITY_MULT
        reports = node.fail_reports
        for reporter in [name for name, when in reports.items() if when < oldest]:
            del reports[reporter]
        return len(reports)

    def failover(self, ctx: Ctx, mode: str) -> None:
        """FAILOVER [FORCE|TAKEOVER]: on a replica that knows its master; a
        plain one only while the master is reachable and not failed. O(1)."""
        myself = self.topology.myself
        if myself.is_master:
            raise CommandError(errors.CLUSTER_FAILOVER_ON_MASTER)
        master = myself.master
        if master is None:
            raise CommandError(errors.CLUSTER_FAILOVER_NO_MASTER)
        if not mode and (master.flags & FAIL_FLAG or master.link is None):
            raise CommandError(errors.CLUSTER_FAILOVER_MASTER_DOWN)
        self.state.failover(mode, ctx.now_ms())
        self._done()

    def set_config_epoch(self, ctx: Ctx, epoch: int) -> None:
        """SET-CONFIG-EPOCH epoch: only on a node that knows no other and has
        epoch 0 (cluster creation gives each node its own). O(1)."""
        topology = self.topology
        if epoch < 0:
            raise errors.cluster_bad_config_epoch(epoch)
        if len(topology.nodes) > 1:
            raise CommandError(errors.CLUSTER_EPOCH_OTHER_NODES)
        if topology.myself.config_epoch != 0:
            raise CommandError(errors.CLUSTER_EPOCH_NON_ZERO)
        topology.myself.config_epoch = epoch
        topology.current_epoch = max(topology.current_epoch, epoch)
        self.state.update_state(ctx.now_ms())
        self.state.save_config(False)
        self._done()

    def reset(self, ctx: Ctx, hard: bool) -> None:
        """RESET [HARD|SOFT]: refused on a master holding keys; a replica
        drops its data and becomes a master; then the state machine forgets
        every other node (HARD: a new id, epochs 0). O(keys + 16384 + nodes)."""
        if self.topology.myself.is_master:
            if len(ctx.db):
                raise CommandError(errors.CLUSTER_RESET_MASTER_WITH_KEYS)
        else:
            engine = ctx.engine
            for db in engine.dbs:
                engine.signal_all_waited(db.index)
                db.flush()
            engine.tracking.flushed()
        self.state.reset(hard, ctx.now_ms())
        self._done()

    def bump_epoch(self, ctx: Ctx) -> bytes:
        """BUMPEPOCH: ``BUMPED n`` when a new config epoch was taken, else
        ``STILL n``. O(nodes)."""
        bumped = self.state.bump_epoch()
        self._done()
        return b"%s %d" % (b"BUMPED" if bumped else b"STILL", self.topology.myself.config_epoch)

    def save_config(self, ctx: Ctx) -> None:
        """SAVECONFIG: nodes.conf written (and fsynced) now. O(16384 + nodes)."""
        if self.save_now is None:
            self.state.save_config(True)
            self._done()
            return
        try:
            self.save_now()
        except OSError as exc:
            raise errors.cluster_save_failed(exc.strerror or str(exc)) from None

    def info(self, ctx: Ctx) -> bytes:
        """INFO: 7.0.15's text. O(16384)."""
        state = self.state
        return texts.info_text(self.topology, getattr(state, "stats_sent", ()),
                               getattr(state, "stats_received", ()),
                               self.links_buffer_limit_exceeded).encode()

    def nodes(self, ctx: Ctx) -> bytes:
        """NODES: every node's line. O(16384 + nodes)."""
        return texts.nodes_text(self.topology, _plain(ctx)).encode("latin-1")

    def slots(self, ctx: Ctx) -> list[Any]:
        """SLOTS. O(16384 + ranges x replicas)."""
        return texts.slots_reply(self.topology, ctx.config["cluster-preferred-endpoint-type"],
                                 ctx.engine.replication.offset, _plain(ctx))

    def shards(self, ctx: Ctx) -> list[Any]:
        """SHARDS. O(16384 + nodes)."""
        return texts.shards_reply(self.topology, ctx.config["cluster-preferred-endpoint-type"],
                                  ctx.engine.replication.offset, bool(ctx.config["tls-cluster"]))

    def links(self, ctx: Ctx) -> list[Any]:
        """LINKS. O(nodes)."""
        return texts.links_reply(self.topology)

    def myid(self) -> bytes:
        """MYID. O(1)."""
        return self.topology.myself.name

    def myshardid(self) -> bytes:
        """MYSHARDID (7.2): this node's shard id (its master's, for a replica),
        made on first use when nodes.conf had none (a 7.0 file). O(1)."""
        shard = self.topology.master_of(self.topology.myself)
        if not shard.shard_id:
            shard.shard_id = random_name()
        return shard.shard_id

    def count_keys_in_slot(self, ctx: Ctx, slot: int) -> int:
        """COUNTKEYSINSLOT: O(1) with the per-slot key index cluster mode
        keeps; O(keys) on a database without it."""
        db = _database(ctx)
        index = db.key_index
        if isinstance(index, SlotKeyIndex):
            return index.count_in_slot(slot)
        return sum(1 for key in db.data if key_slot(key) == slot)

    def shard_slots(self) -> list[int]:
        """SLOT-STATS: the slots of this node's shard (a replica's master's),
        ascending, as Valkey's doesSlotBelongToMyShard picks them.
        O(16384)."""
        topology = self.topology
        master = topology.master_of(topology.myself)
        return [slot for slot, owner in enumerate(topology.owners) if owner is master]

    def keys_in_slot(self, ctx: Ctx, slot: int, count: int) -> list[bytes]:
        """GETKEYSINSLOT: up to ``count`` keys of the slot. O(count) with the
        per-slot key index; O(keys) without it."""
        db = _database(ctx)
        index = db.key_index
        if isinstance(index, SlotKeyIndex):
            return index.keys_in_slot(slot, count)
        return [key for key in db.data if key_slot(key) == slot][:count]


    def propagate_publish(self, channel: bytes, message: bytes, shard: bool) -> bool:
        """PUBLISH / SPUBLISH: to every node, or to this node's shard, over
        the bus. O(nodes)."""
        self.state.publish(channel, message, shard)
        self._done()
        return True


def _implements(control: Control) -> Cluster:
    """(For the type checker: Control is the handlers' Cluster protocol.)"""
    return control
