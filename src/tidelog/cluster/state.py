"""The cluster state machine: what one node does with the bus, without I/O.

:class:`ClusterState` keeps this node's :class:`~tidelog.cluster.nodes.Topology`
up to date from the messages of the other nodes and from the clock, as
Redis 7.0.15's cluster does (its ``clusterProcessPacket``, ``clusterCron``,
``clusterProcessGossipSection``, ``clusterUpdateSlotsConfigWith``,
``clusterUpdateState``; read for facts, written anew here):

- the handshake (MEET, then PING/PONG until the peer's real name is known);
- the gossip: every PING, PONG and MEET carries a few random nodes, and
  every node this one suspects (PFAIL);
- failure detection: PFAIL after ``node_timeout`` without an answer, FAIL
  when most masters report it, broadcast to every node;
- epochs and slots: the highest config epoch wins a slot; a stale claimer
  gets an UPDATE; equal epochs of two masters are told apart by their names;
- roles: a master left without slots follows their new owner; a replica
  follows its master's moves; a replica moves to an orphaned master
  (:mod:`tidelog.cluster.migration`);
- the cluster state (ok or fail) that the router checks;
- PUBLISH over the bus.

Replica elections and manual failovers are in :mod:`tidelog.cluster.failover`.

It does no I/O and reads no clock: times (milliseconds) come in with each
call.  What the shell must do (connect, send, close, save nodes.conf,
replicate, delete keys, deliver a message, pause writes, log) is appended
to ``outbox`` as :mod:`~tidelog.cluster.actions`; ``drain()`` hands them over.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from ..keyslot import SLOTS
from . import failover, migration
from .actions import (
    Action,
    Close,
    Connect,
    DeleteSlotKeys,
    Deliver,
    Link,
    Log,
    Replicate,
    SaveConfig,
    Send,
    outbound_link,
)
from .messages import (
    EXT_FORGOTTEN_NODE,
    EXT_HOSTNAME,
    EXT_HUMAN_NODENAME,
    EXT_SHARDID,
    EXTENSIONS_SUPPORTED,
    FAIL,
    FAIL_FLAG,
    FAILOVER_AUTH_ACK,
    FAILOVER_AUTH_REQUEST,
    HANDSHAKE,
    MASTER,
    MEET,
    MEET_FLAG,
    MF_EXT_DATA,
    MF_PAUSED,
    MFSTART,
    MIGRATE_TO,
    MYSELF,
    NOADDR,
    NOFAILOVER,
    PFAIL,
    PING,
    PONG,
    PUBLISH,
    PUBLISHSHARD,
    SLAVE,
    STATE_FAIL,
    STATE_OK,
    TYPE_NAMES,
    UPDATE,
    Extension,
    Gossip,
    Message,
    slot_bit,
    slots_of,
)
from .nodes import Node, Topology, random_name

KNOWN_FLAGS = 1023
"""The node flags of Redis 7.0 (bits 0-9): other bits a peer sends (Valkey's
1024, 2048, 4096) are dropped on the way in."""
GOSSIP_FLAGS = KNOWN_FLAGS & ~MYSELF
FAIL_REPORT_VALIDITY_MULT = 2
"""A failure report counts for node_timeout x this."""
FAIL_UNDO_TIME_MULT = 2
"""A failed master still owning its slots is cleared after node_timeout x this."""
BLACKLIST_TTL_MS = 60_000
"""How long CLUSTER FORGET keeps a node out of the gossip."""
WRITABLE_DELAY_MS = 2000
"""A master that starts with the state fail waits this long before turning ok."""
MIN_REJOIN_DELAY_MS = 500
MAX_REJOIN_DELAY_MS = 5000


@dataclass(slots=True)
class ClusterSettings:
    """The ``cluster-*`` options the state machine reads (the shell keeps them
    in step with CONFIG SET at every tick).  Times in milliseconds; the
    announce_* strings are bytes, empty when not set."""

    node_timeout: int = 15000
    announce_ip: bytes = b""
    announce_port: int = 0
    announce_cport: int = 0
    announce_pport: int = 0
    announce_hostname: bytes = b""
    announce_human_nodename: bytes = b""
    require_full_coverage: bool = True
    allow_reads_when_down: bool = False
    allow_pubsubshard_when_down: bool = True
    replica_validity_factor: int = 10
    migration_barrier: int = 1
    allow_replica_migration: bool = True
    replica_no_failover: bool = False
    repl_ping_period_s: int = 10
    preferred_endpoint_type: str = "ip"
    link_sendbuf_limit: int = 0


@dataclass(slots=True)
class _Todo:
    """Work put off to the end of the current entry point (Redis's
    clusterDoBeforeSleep flags)."""

    update_state: bool = False
    save: bool = False
    fsync: bool = False
    handle_failover: bool = False


@dataclass(slots=True, eq=False)
class ClusterState:
    """One node's side of the cluster bus (see the module's text).

    ``now`` is the creation time (ms): the writable delay of a master that
    starts in the fail state counts from the first state update.
    """

    topology: Topology
    settings: ClusterSettings
    now: int = 0
    rng: random.Random = field(default_factory=random.Random)
    outbox: list[Action] = field(default_factory=list)
    stats_sent: list[int] = field(default_factory=lambda: [0] * len(TYPE_NAMES))
    stats_received: list[int] = field(default_factory=lambda: [0] * len(TYPE_NAMES))
    repl_offset: int = 0
    """This node's replication offset (a master's, or what a replica
    processed), as last set; ``offset_source``, when given, is read instead."""
    offset_source: Callable[[], int] | None = None
    master_data_age: int = 0
    """A replica: ms since it last heard from its master (or lost the link)."""
    owner_not_claiming: dict[int, Node] = field(default_factory=dict)
    """Slot -> the owner that stopped claiming it (kept bound, not defended
    by epoch).  An entry counts only while that node still owns the slot
    here: a slot bound anew (ADDSLOTS, SETSLOT, a claim) is defended again,
    as Redis clears the mark when it unbinds a slot."""

    replicating: Node | None = None
    """The master the shell was last told to replicate."""
    iteration: int = 0
    pfail_nodes: int = 0
    first_update: int = 0
    among_minority_time: int = 0
    mf: failover.Failover = field(default_factory=failover.Failover)
    todo: _Todo = field(default_factory=_Todo)

    def __post_init__(self) -> None:
        myself = self.topology.myself
        if myself.is_replica and myself.master is None:
            # a replica whose master nodes.conf lost: a master again
            self.topology.set_master(myself, None)

    # -- the outbox ----------------------------------------------------------------------
    def drain(self) -> list[Action]:
        """The actions queued since the last call, in order. O(actions)."""
        out, self.outbox = self.outbox, []
        return out

    def log(self, level: str, text: str) -> None:
        self.outbox.append(Log(level, text))

    def finish(self, now: int) -> None:
        """What the entry points put off (Redis's beforeSleep): the failover
        step, the state update, the nodes.conf save."""
        todo = self.todo
        if todo.handle_failover:
            todo.handle_failover = False
            if self.topology.myself.is_replica:
                failover.handle_manual(self, now)
                failover.handle_replica(self, now)
        if todo.update_state:
            todo.update_state = False
            self.update_state(now)
        if todo.save:
            self.outbox.append(SaveConfig(todo.fsync))
            todo.save = todo.fsync = False

    def later(self, *, update: bool = False, save: bool = False, fsync: bool = False,
              handle_failover: bool = False) -> None:
        todo = self.todo
        todo.update_state |= update
        todo.save |= save or fsync
        todo.fsync |= fsync
        todo.handle_failover |= handle_failover

    # -- sending -------------------------------------------------------------------------
    def header(self, kind: int) -> Message:
        """A message of ``kind`` from this node (Redis's clusterBuildMessageHdr):
        a replica sends its master's slots and config epoch. O(1) + the
        2 KB bitmap copy."""
        topology, settings = self.topology, self.settings
        myself = topology.myself
        master = topology.master_of(myself)
        mflags = MF_EXT_DATA
        if myself.is_master and self.mf.end:
            mflags |= MF_PAUSED
        return Message(
            type=kind, sender=myself.name, current_epoch=topology.current_epoch,
            config_epoch=master.config_epoch, offset=self.offset(),
            myslots=bytes(master.slots),
            slaveof=myself.master.name if myself.master is not None else None,
            myip=settings.announce_ip, port=myself.port, pport=myself.pport, cport=myself.cport,
            flags=myself.flags & KNOWN_FLAGS,
            state=STATE_OK if topology.state_ok else STATE_FAIL, mflags=mflags)

    def send(self, link: Link | None, msg: Message) -> None:
        if link is None:
            return
        if 0 <= msg.type < len(self.stats_sent):
            self.stats_sent[msg.type] += 1
        self.outbox.append(Send(link, msg))

    def broadcast(self, msg: Message) -> None:
        """To every node with a link, but this one and those in handshake."""
        for node in list(self.topology.nodes.values()):
            if node.link is None or node.flags & (MYSELF | HANDSHAKE):
                continue
            self.send(outbound_link(node), msg)

    def _gossip_entry(self, node: Node) -> Gossip:
        return Gossip(name=node.name, ping_sent=node.ping_sent // 1000,
                      pong_received=node.pong_received // 1000, ip=node.ip, port=node.port,
                      cport=node.cport, flags=node.flags & GOSSIP_FLAGS, pport=node.pport)

    def send_ping(self, link: Link | None, kind: int, now: int) -> None:
        """PING, PONG or MEET with gossip (Redis's clusterSendPing): about a
        tenth of the nodes (3 at least, all but two at most), chosen at
        random, skipping handshake and address-less nodes and unreachable
        ones without slots, then every node in PFAIL. O(nodes)."""
        if link is None:
            return
        nodes = self.topology.nodes
        fresh = len(nodes) - 2
        wanted = min(max(3, len(nodes) // 10), fresh)
        node = link.node
        if node is not None and kind == PING:
            node.ping_sent = now
        msg = self.header(kind)
        chosen: dict[bytes, Node] = {}
        candidates = list(nodes.values())
        tries = wanted * 3
        while fresh > 0 and len(chosen) < wanted and tries > 0:
            tries -= 1
            other = self.rng.choice(candidates)
            if other.flags & (MYSELF | PFAIL):
                continue
            if other.flags & (HANDSHAKE | NOADDR) or (other.link is None and other.numslots == 0):
                fresh -= 1
                continue
            if other.name in chosen:
                continue
            chosen[other.name] = other
            fresh -= 1
        pfail_left = self.pfail_nodes
        if pfail_left:
            for other in candidates:
                if other.flags & (HANDSHAKE | NOADDR) or not other.flags & PFAIL:
                    continue
                chosen[other.name] = other
                pfail_left -= 1
                if not pfail_left:
                    break
        msg.gossip = [self._gossip_entry(n) for n in chosen.values()]
        if node is not None and node.flags & EXTENSIONS_SUPPORTED:
            if self.settings.announce_hostname:
                msg.extensions.append(Extension(EXT_HOSTNAME, self.settings.announce_hostname))
        self.send(link, msg)

    def broadcast_pong(self, local_replicas_only: bool, now: int) -> None:
        """A PONG to every node (or to the replicas of this node's master
        only), so they see a change of this node at once."""
        myself = self.topology.myself
        for node in list(self.topology.nodes.values()):
            if node.link is None or node.flags & (MYSELF | HANDSHAKE):
                continue
            if local_replicas_only and not (node.is_replica and node.master is not None and (
                    node.master is myself.master or node.master is myself)):
                continue
            self.send_ping(outbound_link(node), PONG, now)

    def send_update(self, link: Link | None, about: Node) -> None:
        msg = self.header(UPDATE)
        msg.about, msg.update_epoch, msg.update_slots = about.name, about.config_epoch, bytes(about.slots)
        self.send(link, msg)

    def send_fail(self, about: Node) -> None:
        msg = self.header(FAIL)
        msg.about = about.name
        self.broadcast(msg)

    def publish(self, channel: bytes, message: bytes, shard: bool) -> None:
        """PUBLISH (to every node) or SPUBLISH (to the nodes of this node's
        shard) over the bus. O(nodes)."""
        msg = self.header(PUBLISHSHARD if shard else PUBLISH)
        msg.channel, msg.payload = channel, message
        if not shard:
            self.broadcast(msg)
            return
        topology = self.topology
        master = topology.master_of(topology.myself)
        for node in (master, *master.replicas):
            if node.link is None or node.flags & (MYSELF | HANDSHAKE):
                continue
            self.send(outbound_link(node), msg)

    # -- links ---------------------------------------------------------------------------
    def on_link_connected(self, link: Link, now: int) -> None:
        """A link is up: on an outbound one, MEET (a node being met) or
        PING at once, so that failure detection has a ping to time."""
        if link.inbound:
            return
        node = link.node
        if node is None or self.topology.nodes.get(node.name) is not node:
            self.outbox.append(Close(link))  # the node went meanwhile
            return
        old = outbound_link(node)
        if old is not None and old is not link:
            self.outbox.append(Close(old))
        node.link = link
        ping_sent = node.ping_sent
        self.send_ping(link, MEET if node.flags & MEET_FLAG else PING, now)
        if ping_sent:
            node.ping_sent = ping_sent  # the ping in flight before the reconnection
        node.flags &= ~MEET_FLAG
        self.finish(now)

    def on_link_failed(self, node: Node, now: int) -> None:
        """An outbound connection could not be made (retried at the next tick)."""
        self.log("verbose", f"Connection with Node {node.name.decode()} at "
                            f"{node.ip.decode(errors='replace')}:{node.cport} failed")

    def on_link_closed(self, link: Link, now: int) -> None:
        node = link.node
        if node is not None:
            if node.link is link:
                node.link = None
            if node.inbound_link is link:
                node.inbound_link = None

    def _free_link(self, link: Link | None) -> None:
        if link is None:
            return
        self.on_link_closed(link, 0)
        self.outbox.append(Close(link))

    # -- nodes ---------------------------------------------------------------------------
    def delete_node(self, node: Node) -> None:
        """Redis's clusterDelNode: its slots unassigned, its reports gone,
        its links closed."""
        self._free_link(outbound_link(node))
        inbound = node.inbound_link
        self._free_link(inbound if isinstance(inbound, Link) else None)
        self.topology.remove_node(node)
        for replica in list(node.replicas):
            replica.master = None
        node.replicas.clear()

    def blacklisted(self, name: bytes, now: int) -> bool:
        forgotten = self.topology.forgotten
        for old in [n for n, until in forgotten.items() if until < now]:
            del forgotten[old]
        return name in forgotten

    def _address_of(self, link: Link, announced: bytes) -> bytes:
        return announced if announced else link.peer_ip

    def _update_address(self, node: Node, link: Link, msg: Message) -> bool:
        """A node's address from a message on a link it opened (Redis's
        nodeUpdateAddressIfNeeded); True if it changed."""
        if link is node.link or node.is_myself:
            return False
        ip = self._address_of(link, msg.myip)
        if (node.ip, node.port, node.cport, node.pport) == (ip, msg.port, msg.cport, msg.pport):
            return False
        node.ip, node.port, node.cport, node.pport = ip, msg.port, msg.cport, msg.pport
        self._free_link(outbound_link(node))
        node.flags &= ~NOADDR
        self.log("notice", f"Address updated for node {node.name.decode()}, now "
                           f"{ip.decode(errors='replace')}:{node.port}")
        myself = self.topology.myself
        if myself.is_replica and myself.master is node:
            self._replicate(node)
        return True

    def _replicate(self, master: Node | None) -> None:
        self.replicating = master
        self.outbox.append(Replicate(master))

    def set_as_master(self, node: Node) -> None:
        """Redis's clusterSetNodeAsMaster: a replica that became a master."""
        if node.is_master:
            return
        if node.master is not None and not node.is_myself:
            node.flags |= MIGRATE_TO
        self.topology.set_master(node, None)
        self.later(update=True, save=True)

    def follow(self, master: Node, now: int) -> None:
        """Redis's clusterSetMaster: this node replicates ``master``."""
        topology = self.topology
        myself = topology.myself
        if myself.is_master:
            myself.flags &= ~MIGRATE_TO
            topology.migrating_to.clear()
            topology.importing_from.clear()
        topology.set_master(myself, master)
        self._replicate(master)
        failover.reset_manual(self)

    # -- what CLUSTER commands ask -------------------------------------------------------
    def meet(self, ip: bytes, port: int, cport: int, now: int) -> None:
        """A handshake with ip:port (bus port ``cport``), unless one with that
        address is already under way (Redis's clusterStartHandshake). O(nodes)."""
        for node in self.topology.nodes.values():
            if node.flags & HANDSHAKE and (node.ip, node.port, node.cport) == (ip, port, cport):
                return
        node = Node(name=random_name(), flags=HANDSHAKE | MEET_FLAG, ctime=now, ip=ip,
                    port=port, cport=cport)
        self.topology.add_node(node)
        self.outbox.append(Connect(node))

    def forget(self, node: Node, now: int) -> None:
        """CLUSTER FORGET: remove ``node`` and keep it out of the gossip for a
        minute. O(16384 + nodes)."""
        self.topology.forgotten[node.name] = now + BLACKLIST_TTL_MS
        self.delete_node(node)
        self.later(update=True, save=True)
        self.finish(now)

    def replicate(self, master: Node, now: int) -> None:
        """CLUSTER REPLICATE (and a master left without slots): follow ``master``."""
        self.follow(master, now)
        self.later(update=True, save=True)
        self.finish(now)

    def reset(self, hard: bool, now: int) -> None:
        """CLUSTER RESET: a master again, no slots, no other node; HARD: a new
        name and epochs 0. O(16384 + nodes)."""
        topology = self.topology
        myself = topology.myself
        if myself.is_replica:
            self.set_as_master(myself)
            self._replicate(None)
        topology.migrating_to.clear()
        topology.importing_from.clear()
        failover.reset_manual(self)
        for slot in range(SLOTS):
            topology.unassign(slot)
        self.owner_not_claiming.clear()
        for node in [n for n in topology.nodes.values() if n is not myself]:
            self.delete_node(node)
        if hard:
            topology.current_epoch = topology.last_vote_epoch = myself.config_epoch = 0
            self.log("warning", "configEpoch set to 0 via CLUSTER RESET HARD")
            topology.rename(myself, random_name())
            myself.shard_id = random_name()
            self.log("notice", f"Node hard reset, now I'm {myself.name.decode()}")
        self.later(update=True, save=True, fsync=True)
        self.finish(now)

    def failover(self, mode: str, now: int) -> None:
        """CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica (Control checked it)."""
        failover.start_manual(self, mode, now)
        self.finish(now)

    def max_epoch(self) -> int:
        return max([self.topology.current_epoch,
                    *(n.config_epoch for n in self.topology.nodes.values())])

    def bump_epoch(self) -> bool:
        """A new config epoch without consensus, when this node's is 0 or not
        the greatest (Redis's clusterBumpConfigEpochWithoutConsensus). O(nodes)."""
        topology = self.topology
        myself = topology.myself
        if myself.config_epoch == 0 or myself.config_epoch != self.max_epoch():
            topology.current_epoch += 1
            myself.config_epoch = topology.current_epoch
            self.later(save=True, fsync=True)
            self.log("notice", f"New configEpoch set to {myself.config_epoch}")
            self.finish(self.now)
            return True
        return False

    def save_config(self, fsync: bool) -> None:
        self.outbox.append(SaveConfig(fsync))

    def claim_slots_changed(self) -> None:
        """ADDSLOTS, DELSLOTS, SETSLOT...: save, update the state."""
        self.later(update=True, save=True)
        self.finish(self.now)

    def set_repl_offset(self, offset: int) -> None:
        self.repl_offset = offset

    def offset(self) -> int:
        """The replication offset now (a paused master's must be exact)."""
        return self.offset_source() if self.offset_source is not None else self.repl_offset

    def set_master_data_age(self, age_ms: int) -> None:
        self.master_data_age = age_ms

    # -- messages ------------------------------------------------------------------------
    def on_message(self, link: Link, msg: Message, now: int) -> None:
        """One message from the bus (Redis's clusterProcessPacket)."""
        self.now = now
        try:
            self._process(link, msg, now)
        finally:
            self.finish(now)

    def _process(self, link: Link, msg: Message, now: int) -> None:
        kind = msg.type
        if 0 <= kind < len(self.stats_received):
            self.stats_received[kind] += 1
        topology = self.topology
        myself = topology.myself
        sender = topology.nodes.get(msg.sender)
        if sender is myself and kind in (PING, PONG, MEET) and not link.inbound:
            sender = None  # a MEET sent to our own address: not a peer
        if sender is not None:
            sender.data_received = now
            if link.inbound and link.node is None and not sender.flags & HANDSHAKE:
                old = sender.inbound_link
                if isinstance(old, Link) and old is not link:
                    self._free_link(old)
                link.node = sender
                sender.inbound_link = link
            if msg.mflags & MF_EXT_DATA:
                sender.flags |= EXTENSIONS_SUPPORTED
        if sender is not None and not sender.flags & HANDSHAKE and sender is not myself:
            if msg.current_epoch > topology.current_epoch:
                topology.current_epoch = msg.current_epoch
                self.later(update=True, save=True, fsync=True)
            if msg.config_epoch > sender.config_epoch:
                sender.config_epoch = msg.config_epoch
                self.later(update=True, save=True, fsync=True)
            sender.repl_offset, sender.repl_offset_time = msg.offset, now
            mf = self.mf
            if (mf.end and myself.is_replica and myself.master is sender
                    and msg.mflags & MF_PAUSED and mf.master_offset == -1):
                mf.master_offset = sender.repl_offset
                self.later(handle_failover=True)
                self.log("notice", "Received replication offset for paused master manual "
                                   f"failover: {mf.master_offset}")

        if kind in (PING, MEET):
            if (kind == MEET or not myself.ip) and not self.settings.announce_ip and link.local_ip:
                if myself.ip != link.local_ip:
                    myself.ip = link.local_ip
                    self.log("notice", f"IP address for this node updated to "
                                       f"{myself.ip.decode(errors='replace')}")
                    self.later(save=True)
            if sender is None and kind == MEET:
                topology.add_node(Node(name=random_name(), flags=HANDSHAKE, ctime=now,
                                       ip=self._address_of(link, msg.myip), port=msg.port,
                                       pport=msg.pport, cport=msg.cport))
                self.later(save=True)
                self._process_gossip(msg, None, now)
            self.send_ping(link, PONG, now)

        if kind in (PING, PONG, MEET):
            if self._handshake_step(link, msg, sender, now):
                return
            peer = link.node
            if not link.inbound and kind == PONG and peer is not None:
                peer.pong_received, peer.ping_sent = now, 0
                if peer.flags & PFAIL:
                    peer.flags &= ~PFAIL
                    self.later(update=True, save=True)
                elif peer.flags & FAIL_FLAG:
                    self._clear_failure(peer, now)
            if sender is not None and sender is not myself:
                self._config_from(link, msg, sender, now)
        elif kind == FAIL:
            failing = topology.nodes.get(msg.about)
            if sender is None:
                self.log("notice", f"Ignoring FAIL message from unknown node "
                                   f"{msg.sender.decode(errors='replace')} about "
                                   f"{msg.about.decode(errors='replace')}")
            elif failing is not None and not failing.flags & (FAIL_FLAG | MYSELF):
                self.log("notice", f"FAIL message received from {sender.name.decode()} about "
                                   f"{failing.name.decode()}")
                failing.flags = (failing.flags | FAIL_FLAG) & ~PFAIL
                failing.fail_time = now
                self.later(update=True, save=True)
        elif kind in (PUBLISH, PUBLISHSHARD):
            if sender is not None:
                self.outbox.append(Deliver(msg.channel, msg.payload, kind == PUBLISHSHARD))
        elif kind == FAILOVER_AUTH_REQUEST:
            if sender is not None:
                failover.vote(self, sender, msg, now)
        elif kind == FAILOVER_AUTH_ACK:
            if (sender is not None and sender.is_master and sender.numslots > 0
                    and msg.current_epoch >= self.mf.auth_epoch):
                self.mf.auth_count += 1
                self.later(handle_failover=True)
        elif kind == MFSTART:
            if sender is not None and sender.master is myself:
                failover.on_mfstart(self, link, sender, now)
        elif kind == UPDATE:
            if sender is None:
                return
            about = topology.nodes.get(msg.about)
            if about is None or about.config_epoch >= msg.update_epoch:
                return
            if about.is_replica:
                self.set_as_master(about)
            about.config_epoch = msg.update_epoch
            self.later(save=True, fsync=True)
            self.update_slots_with(about, msg.update_epoch, msg.update_slots, now)
        else:
            self.log("verbose", f"Received unknown packet type: {kind}")

    def _handshake_step(self, link: Link, msg: Message, sender: Node | None, now: int) -> bool:
        """The end of a handshake, or a PONG from somebody unexpected on an
        outbound link; True when the message needs nothing more."""
        node = link.node
        if node is None or link.inbound:
            return False
        topology = self.topology
        if node.flags & HANDSHAKE:
            if sender is not None:
                self.log("verbose", f"Handshake: we already know node {sender.name.decode()}, "
                                    "updating the address if needed.")
                if self._update_address(sender, link, msg):
                    self.later(update=True, save=True)
                self.delete_node(node)
                return True
            topology.rename(node, msg.sender)
            self.log("notice", f"Handshake with node {node.name.decode()} completed.")
            node.flags &= ~HANDSHAKE
            node.flags |= msg.flags & (MASTER | SLAVE)
            self.later(save=True)
            return False
        if node.name != msg.sender:
            self.log("notice", f"PONG contains mismatching sender ID. About node "
                               f"{node.name.decode()} added {now - node.ctime} ms ago, "
                               f"having flags {node.flags & KNOWN_FLAGS}")
            node.flags |= NOADDR
            node.ip, node.port, node.pport, node.cport = b"", 0, 0, 0
            self._free_link(link)
            self.later(save=True)
            return True
        return False

    def _config_from(self, link: Link, msg: Message, sender: Node, now: int) -> None:
        """What a PING, PONG or MEET of a known node says of it: its address,
        liveness, role, slots, epochs; then its gossip."""
        topology = self.topology
        myself = topology.myself
        kind = msg.type
        sender.flags = (sender.flags & ~NOFAILOVER) | (msg.flags & NOFAILOVER)
        if kind == PING and not sender.flags & HANDSHAKE and self._update_address(sender, link, msg):
            self.later(update=True, save=True)
        if sender.flags & HANDSHAKE:
            return
        # the role
        if msg.slaveof is None:
            self.set_as_master(sender)
        else:
            master = topology.nodes.get(msg.slaveof)
            if sender.is_master:
                for slot in range(SLOTS):
                    if topology.owners[slot] is sender:
                        topology.unassign(slot)
                sender.flags &= ~(MASTER | MIGRATE_TO)
                sender.flags |= SLAVE
                self.later(update=True, save=True)
            if master is not None and sender.master is not master:
                topology.set_master(sender, master)
                self.later(save=True)
        # the slots
        shard_master = sender if sender.is_master else sender.master
        dirty = shard_master is not None and bytes(shard_master.slots) != msg.myslots
        if sender.is_master and dirty:
            self.update_slots_with(sender, msg.config_epoch, msg.myslots, now)
        if dirty:
            owners = topology.owners
            # the slots it claims that it does not own here (its own bitmap
            # is the slots whose owner is it)
            others = (int.from_bytes(msg.myslots, "little")
                      & ~int.from_bytes(sender.slots, "little"))
            for slot in slots_of(others.to_bytes(len(msg.myslots), "little")):
                owner = owners[slot]
                if owner is None or self.not_claimed(slot, owner):
                    continue
                if owner.config_epoch > msg.config_epoch:
                    self.log("verbose", f"Node {sender.name.decode()} has old slots "
                                        f"configuration, sending an UPDATE message about "
                                        f"{owner.name.decode()}")
                    self.send_update(outbound_link(sender), owner)
                    break
        if (myself.is_master and sender.is_master
                and msg.config_epoch == myself.config_epoch):
            self._epoch_collision(sender)
        self._process_gossip(msg, sender, now)
        self._extensions(msg, sender, now)

    def _epoch_collision(self, sender: Node) -> None:
        """Two masters with one config epoch: the one with the smaller name
        takes a new one (Redis's clusterHandleConfigEpochCollision)."""
        topology = self.topology
        myself = topology.myself
        if sender.config_epoch != myself.config_epoch or sender.name <= myself.name:
            return
        topology.current_epoch += 1
        myself.config_epoch = topology.current_epoch
        self.later(save=True, fsync=True)
        self.log("verbose", f"WARNING: configEpoch collision with node {sender.name.decode()}. "
                            f"configEpoch set to {myself.config_epoch}")

    def _extensions(self, msg: Message, sender: Node, now: int) -> None:
        """The ping extensions (7.0's hostname; 7.2's human name, shard id,
        forgotten node); a hostname not sent any more is cleared."""
        hostname = b""
        for ext in msg.extensions:
            if ext.type == EXT_HOSTNAME:
                hostname = ext.value
            elif ext.type == EXT_HUMAN_NODENAME:
                sender.human_nodename = ext.value
            elif ext.type == EXT_SHARDID:
                sender.shard_id = ext.value
            elif ext.type == EXT_FORGOTTEN_NODE:
                node = self.topology.nodes.get(ext.value)
                myself = self.topology.myself
                if node is not None and node is not myself and myself.master is not node:
                    self.topology.forgotten[ext.value] = now + ext.ttl * 1000
                    self.delete_node(node)
                    self.later(update=True, save=True)
        if sender.hostname != hostname:
            sender.hostname = hostname
            self.later(save=True)

    def _process_gossip(self, msg: Message, sender: Node | None, now: int) -> None:
        """Redis's clusterProcessGossipSection: failure reports from masters,
        pong times, new addresses of unreachable nodes, new nodes."""
        topology = self.topology
        myself = topology.myself
        for entry in msg.gossip:
            flags = entry.flags & GOSSIP_FLAGS
            node = topology.nodes.get(entry.name)
            if node is not None:
                if sender is not None and sender.is_master and node is not myself:
                    if flags & (FAIL_FLAG | PFAIL):
                        if sender.name not in node.fail_reports:
                            self.log("verbose", f"Node {sender.name.decode()} reported node "
                                                f"{node.name.decode()} as not reachable.")
                        node.fail_reports[sender.name] = now
                        self._mark_failing_if_needed(node, now)
                    elif node.fail_reports.pop(sender.name, None) is not None:
                        self.log("verbose", f"Node {sender.name.decode()} reported node "
                                            f"{node.name.decode()} is back online.")
                if (not flags & (FAIL_FLAG | PFAIL) and node.ping_sent == 0
                        and self._count_reports(node, now) == 0):
                    pong = entry.pong_received * 1000
                    if pong <= now + 500 and pong > node.pong_received:
                        node.pong_received = pong
                if (node.flags & (FAIL_FLAG | PFAIL) and not flags & (NOADDR | FAIL_FLAG | PFAIL)
                        and node is not myself
                        and (node.ip, node.port, node.cport) != (entry.ip, entry.port, entry.cport)):
                    self._free_link(outbound_link(node))
                    node.ip, node.port, node.cport, node.pport = (
                        entry.ip, entry.port, entry.cport, entry.pport)
                    node.flags &= ~NOADDR
            elif sender is not None and not flags & NOADDR and not self.blacklisted(entry.name, now):
                node = Node(name=entry.name, flags=flags & ~(HANDSHAKE | MEET_FLAG), ctime=now,
                            ip=entry.ip, port=entry.port, cport=entry.cport, pport=entry.pport)
                topology.add_node(node)
                self.outbox.append(Connect(node))

    # -- failures ------------------------------------------------------------------------
    def _count_reports(self, node: Node, now: int) -> int:
        """The failure reports about ``node`` still valid (older ones dropped)."""
        oldest = now - self.settings.node_timeout * FAIL_REPORT_VALIDITY_MULT
        reports = node.fail_reports
        for name in [n for n, when in reports.items() if when < oldest]:
            del reports[name]
        return len(reports)

    def _mark_failing_if_needed(self, node: Node, now: int) -> None:
        """PFAIL here and reported by a majority of masters: FAIL, told to all."""
        if not node.flags & PFAIL or node.flags & FAIL_FLAG:
            return
        failures = self._count_reports(node, now)
        if self.topology.myself.is_master:
            failures += 1
        if failures < self.topology.size // 2 + 1:
            return
        self.log("notice", f"Marking node {node.name.decode()} as failing (quorum reached).")
        node.flags = (node.flags & ~PFAIL) | FAIL_FLAG
        node.fail_time = now
        self.send_fail(node)
        self.later(update=True, save=True)

    def _clear_failure(self, node: Node, now: int) -> None:
        """A FAIL node answers again: cleared for a replica or a master
        without slots at once, for a master still owning its slots once
        nobody failed it over in time."""
        if node.is_replica or node.numslots == 0:
            what = "replica" if node.is_replica else "master without slots"
            self.log("notice", f"Clear FAIL state for node {node.name.decode()}: "
                               f"{what} is reachable again.")
            node.flags &= ~FAIL_FLAG
            self.later(update=True, save=True)
        elif now - node.fail_time > self.settings.node_timeout * FAIL_UNDO_TIME_MULT:
            self.log("notice", f"Clear FAIL state for node {node.name.decode()}: is reachable "
                               "again and nobody is serving its slots after some time.")
            node.flags &= ~FAIL_FLAG
            self.later(update=True, save=True)

    # -- slots ---------------------------------------------------------------------------
    def not_claimed(self, slot: int, owner: Node) -> bool:
        """Whether ``owner`` (the slot's owner here) stopped claiming it. O(1)."""
        return self.owner_not_claiming.get(slot) is owner

    def update_slots_with(self, sender: Node, epoch: int, slots: bytes, now: int) -> None:
        """A master's claim (Redis's clusterUpdateSlotsConfigWith): each
        claimed slot that is unassigned, or owned with a smaller config
        epoch, and not being imported here, moves to it; this node (or its
        master) left without slots follows it; slots lost with keys still
        here have their keys deleted.  Only the slots where the claim and
        what it owns here differ are visited (a node's bitmap is the slots
        whose owner it is), plus its slots awaiting a claim.  O(2048/8 +
        the slots that differ)."""
        topology = self.topology
        myself = topology.myself
        if sender is myself:
            self.log("notice", "Discarding UPDATE message about myself.")
            return
        current_master = topology.master_of(myself)
        owners = topology.owners
        new_master: Node | None = None
        claimed_mask = int.from_bytes(slots, "little")
        claimed = claimed_mask.bit_count()
        migrated = 0
        lost: list[int] = []
        # claimed and its own here: no longer awaiting a claim
        for slot in [s for s in self.owner_not_claiming
                     if owners[s] is sender and slot_bit(slots, s)]:
            self.owner_not_claiming.pop(slot, None)
        differ = claimed_mask ^ int.from_bytes(sender.slots, "little")
        for slot in slots_of(differ.to_bytes(len(slots), "little")):
            owner = owners[slot]
            if slot_bit(slots, slot):  # claimed, owned by another or nobody
                if slot in topology.importing_from:
                    continue
                if owner is None or self.not_claimed(slot, owner) or owner.config_epoch < epoch:
                    if owner is myself:
                        lost.append(slot)
                    if owner is current_master:
                        new_master = sender
                        migrated += 1
                    topology.assign(slot, sender)
                    self.owner_not_claiming.pop(slot, None)
                    self.later(update=True, save=True, fsync=True)
            else:  # its own here, not claimed
                self.owner_not_claiming[slot] = sender
        if (new_master is not None and current_master.numslots == 0
                and (self.settings.allow_replica_migration or claimed == migrated)):
            self.log("notice", f"Configuration change detected. Reconfiguring myself as a "
                               f"replica of {sender.name.decode()}")
            self.follow(sender, now)
            self.later(update=True, save=True, fsync=True)
        elif (myself.master is not None and myself.master.master is not None
              and myself.master.master is not myself):
            grand = myself.master.master
            self.log("notice", f"I'm a sub-replica! Reconfiguring myself as a replica of "
                               f"grandmaster {grand.name.decode()}")
            self.follow(grand, now)
            self.later(update=True, save=True, fsync=True)
        elif lost:
            self.outbox.append(DeleteSlotKeys(lost))

    # -- the cluster's state -------------------------------------------------------------
    def update_state(self, now: int) -> None:
        """Ok or fail (Redis's clusterUpdateState): every slot served by a
        reachable master (with require-full-coverage) and a majority of the
        masters with slots reachable; a master waits before turning ok after
        a start or a stay in a minority. O(16384 + nodes)."""
        topology = self.topology
        myself = topology.myself
        if self.first_update == 0:
            self.first_update = now or 1
        if myself.is_master and not topology.state_ok and now - self.first_update < WRITABLE_DELAY_MS:
            return
        ok = True
        size = reachable = 0
        for node in topology.nodes.values():
            if node.numslots:
                if node.flags & FAIL_FLAG:
                    ok = False  # a slot served by a failed node (all slots to cover)
                if node.is_master:
                    size += 1
                    if not node.flags & (FAIL_FLAG | PFAIL):
                        reachable += 1
        if not self.settings.require_full_coverage:
            ok = True
        elif ok and sum(n.numslots for n in topology.nodes.values()) < SLOTS:
            ok = False  # an unassigned slot (each slot counts in its one owner's numslots)
        topology.size = size
        if reachable < size // 2 + 1:
            ok = False
            self.among_minority_time = now
        if ok != topology.state_ok:
            delay = min(max(self.settings.node_timeout, MIN_REJOIN_DELAY_MS), MAX_REJOIN_DELAY_MS)
            if ok and myself.is_master and now - self.among_minority_time < delay:
                return
            self.log("notice", f"Cluster state changed: {'ok' if ok else 'fail'}")
            topology.state_ok = ok

    # -- the timer -----------------------------------------------------------------------
    def on_tick(self, now: int) -> None:
        """Every 100 ms (Redis's clusterCron): reconnect, ping, time out,
        fail over, migrate to an orphaned master."""
        self.now = now
        self.iteration += 1
        topology = self.topology
        myself = topology.myself
        settings = self.settings
        timeout = settings.node_timeout
        if settings.announce_ip and myself.ip != settings.announce_ip:
            myself.ip = settings.announce_ip
            self.later(save=True)
        nofailover = NOFAILOVER if settings.replica_no_failover else 0
        if myself.flags & NOFAILOVER != nofailover:  # Redis's clusterUpdateMyselfFlags
            myself.flags = (myself.flags & ~NOFAILOVER) | nofailover
            self.later(update=True, save=True)
        handshake_timeout = max(timeout, 1000)
        self.pfail_nodes = 0
        for node in list(topology.nodes.values()):
            if node.flags & (MYSELF | NOADDR):
                continue
            if node.flags & PFAIL:
                self.pfail_nodes += 1
            if node.flags & HANDSHAKE and now - node.ctime > handshake_timeout:
                self.delete_node(node)
                continue
            if node.link is None:
                if node.ping_sent == 0:
                    node.ping_sent = now
                self.outbox.append(Connect(node))
        if self.iteration % 10 == 0:
            candidates = list(topology.nodes.values())
            oldest: Node | None = None
            for _ in range(5):
                node = self.rng.choice(candidates)
                if node.link is None or node.ping_sent or node.flags & (MYSELF | HANDSHAKE):
                    continue
                if oldest is None or node.pong_received < oldest.pong_received:
                    oldest = node
            if oldest is not None:
                self.send_ping(outbound_link(oldest), PING, now)
        update = False
        for node in list(topology.nodes.values()):
            if node.flags & (MYSELF | NOADDR | HANDSHAKE):
                continue
            ping_delay = now - node.ping_sent
            data_delay = now - node.data_received
            link = outbound_link(node)
            if (link is not None and now - link.ctime > timeout and node.ping_sent
                    and ping_delay > timeout // 2 and data_delay > timeout // 2):
                self._free_link(link)  # silent for too long: reconnect
                link = None
            if link is not None and node.ping_sent == 0 and now - node.pong_received > timeout // 2:
                self.send_ping(link, PING, now)
                continue
            if self.mf.end and myself.is_master and self.mf.replica is node and link is not None:
                self.send_ping(link, PING, now)
                continue
            if node.ping_sent == 0:
                continue
            if min(ping_delay, data_delay) > timeout and not node.flags & (PFAIL | FAIL_FLAG):
                self.log("debug", f"*** NODE {node.name.decode()} possibly failing")
                node.flags |= PFAIL
                update = True
        master = myself.master
        if (myself.is_replica and master is not None and master.ip and master.port
                and self.replicating is not master):
            self._replicate(master)
        failover.check_manual_timeout(self, now)
        if myself.is_replica:
            failover.handle_manual(self, now)
            failover.handle_replica(self, now)
            migration.handle(self, now)
        if update or not topology.state_ok:
            self.later(update=True)
        self.finish(now)
