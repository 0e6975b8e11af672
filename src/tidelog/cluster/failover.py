"""Replica elections and manual failovers, for :mod:`tidelog.cluster.state`.

As Redis 7.0.15 (``clusterHandleSlaveFailover``, ``clusterGetSlaveRank``,
``clusterSendFailoverAuthIfNeeded``, ``clusterHandleManualFailover``; read
for facts, written anew):

- a replica whose master is FAIL waits 500 ms, a random 0-499 ms and one
  second per sibling with more data (its rank), then takes a new epoch and
  asks every master for its vote; a majority of the masters with slots
  makes it the master of its shard, with the election's epoch;
- a master votes once per epoch, for a replica of a failed master (or of a
  manual failover), not twice for the same shard within two node timeouts,
  and not for a claim older than what it knows; the vote is saved to
  nodes.conf before it is sent;
- CLUSTER FAILOVER: the replica asks its master to stop writes (MFSTART);
  the master pauses them and sends its offset; once the replica has
  processed up to it, it runs the election at once, votes granted even
  though the master is not failing.  FORCE skips the master; TAKEOVER skips
  the election (a new epoch without consensus).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from ..keyslot import SLOTS
from .actions import Action, Link, PauseWrites, Replicate, outbound_link
from .messages import (
    FAIL_FLAG,
    FAILOVER_AUTH_ACK,
    FAILOVER_AUTH_REQUEST,
    MF_FORCEACK,
    MFSTART,
    NOFAILOVER,
    PING,
    Message,
    slot_bit,
)
from .nodes import Node, Topology

MF_TIMEOUT_MS = 5000
"""A manual failover must end within this."""
MF_PAUSE_MULT = 2
"""The master pauses writes for MF_TIMEOUT_MS x this."""


@dataclass(slots=True)
class Failover:
    """The election under way (``auth_*``) and the manual failover (``end``
    and the rest; ``replica``: on a master, the replica that asked)."""

    auth_time: int = 0
    auth_count: int = 0
    auth_sent: bool = False
    auth_rank: int = 0
    auth_epoch: int = 0
    end: int = 0
    can_start: bool = False
    replica: Node | None = None
    master_offset: int = -1
    cant_reason: str = ""


class Settings(Protocol):
    node_timeout: int
    replica_no_failover: bool
    replica_validity_factor: int
    repl_ping_period_s: int


class ClusterState(Protocol):
    """What this module uses of :class:`tidelog.cluster.state.ClusterState`."""

    @property
    def topology(self) -> Topology: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def rng(self) -> random.Random: ...
    @property
    def outbox(self) -> list[Action]: ...
    @property
    def mf(self) -> Failover: ...
    @property
    def owner_not_claiming(self) -> dict[int, Node]: ...
    master_data_age: int
    replicating: Node | None

    def not_claimed(self, slot: int, owner: Node) -> bool: ...

    def offset(self) -> int: ...
    def log(self, level: str, text: str) -> None: ...
    def later(self, *, update: bool = False, save: bool = False, fsync: bool = False,
              handle_failover: bool = False) -> None: ...
    def header(self, kind: int) -> Message: ...
    def send(self, link: Link | None, msg: Message) -> None: ...
    def send_ping(self, link: Link | None, kind: int, now: int) -> None: ...
    def broadcast(self, msg: Message) -> None: ...
    def broadcast_pong(self, local_replicas_only: bool, now: int) -> None: ...
    def bump_epoch(self) -> bool: ...
    def set_as_master(self, node: Node) -> None: ...
    def update_state(self, now: int) -> None: ...
    def save_config(self, fsync: bool) -> None: ...


def reset_manual(state: ClusterState) -> None:
    """Redis's resetManualFailover: a master that paused writes for it resumes them."""
    mf = state.mf
    if mf.replica is not None:
        state.outbox.append(PauseWrites(0))
    mf.end, mf.can_start, mf.replica, mf.master_offset = 0, False, None, -1


def check_manual_timeout(state: ClusterState, now: int) -> None:
    if state.mf.end and state.mf.end < now:
        state.log("warning", "Manual failover timed out.")
        reset_manual(state)


def start_manual(state: ClusterState, mode: str, now: int) -> None:
    """CLUSTER FAILOVER on a replica: ``""`` (with the master), ``force`` or
    ``takeover``."""
    reset_manual(state)
    state.mf.end = now + MF_TIMEOUT_MS
    myself = state.topology.myself
    if mode == "takeover":
        state.log("notice", "Taking over the master (user request).")
        state.bump_epoch()
        replace_master(state, now)
    elif mode == "force":
        state.log("notice", "Forced failover user request accepted.")
        state.mf.can_start = True
        state.later(handle_failover=True)
    else:
        state.log("notice", "Manual failover user request accepted.")
        master = myself.master
        if master is not None:
            state.send(outbound_link(master), state.header(MFSTART))


def on_mfstart(state: ClusterState, link: Link, replica: Node, now: int) -> None:
    """A replica of this master asks for a manual failover: pause writes,
    and send it the offset at once."""
    reset_manual(state)
    mf = state.mf
    mf.end = now + MF_TIMEOUT_MS
    mf.replica = replica
    state.outbox.append(PauseWrites(now + MF_TIMEOUT_MS * MF_PAUSE_MULT))
    state.log("notice", f"Manual failover requested by replica {replica.name.decode()}.")
    state.send_ping(link, PING, now)


def handle_manual(state: ClusterState, now: int) -> None:
    """A replica in a manual failover: start once it has all the master sent."""
    mf = state.mf
    if not mf.end or mf.can_start or mf.master_offset == -1:
        return
    # (>=: a master's own PINGs to its replicas may follow the offset it sent)
    if state.offset() >= mf.master_offset:
        mf.can_start = True
        state.log("notice", "All master replication stream processed, manual failover can start.")
        state.later(handle_failover=True)
        return
    _cant(state, "Waiting for the master's replication offset")


def rank(state: ClusterState) -> int:
    """The siblings (that may fail over) with more data than this replica."""
    master = state.topology.myself.master
    if master is None:
        return 0
    myself = state.topology.myself
    return sum(1 for r in master.replicas
               if r is not myself and not r.flags & NOFAILOVER and r.repl_offset > state.offset())


def handle_replica(state: ClusterState, now: int) -> None:
    """Redis's clusterHandleSlaveFailover, called at every tick on a replica."""
    topology, settings, mf = state.topology, state.settings, state.mf
    myself = topology.myself
    master = myself.master
    manual = bool(mf.end) and mf.can_start
    timeout = settings.node_timeout
    auth_timeout = max(timeout * 2, 2000)
    auth_retry = auth_timeout * 2
    if (myself.is_master or master is None or (not master.flags & FAIL_FLAG and not manual)
            or (settings.replica_no_failover and not manual) or master.numslots == 0):
        mf.cant_reason = ""
        return
    data_age = state.master_data_age
    if data_age > timeout:
        data_age -= timeout
    limit = settings.repl_ping_period_s * 1000 + timeout * settings.replica_validity_factor
    if settings.replica_validity_factor and data_age > limit and not manual:
        _cant(state, "Disconnected from master for longer than allowed. Please check the "
                     "'cluster-replica-validity-factor' configuration option.")
        return
    auth_age = now - mf.auth_time
    if auth_age > auth_retry:
        mf.auth_time = now + 500 + state.rng.randrange(500)
        mf.auth_count, mf.auth_sent = 0, False
        mf.auth_rank = rank(state)
        mf.auth_time += mf.auth_rank * 1000
        if mf.end:
            mf.auth_time, mf.auth_rank = now, 0
            state.later(handle_failover=True)
        state.log("notice", f"Start of election delayed for {mf.auth_time - now} milliseconds "
                            f"(rank #{mf.auth_rank}, offset {state.offset()}).")
        state.broadcast_pong(True, now)
        return
    if not mf.auth_sent and not mf.end:
        new_rank = rank(state)
        if new_rank > mf.auth_rank:
            added = (new_rank - mf.auth_rank) * 1000
            mf.auth_time += added
            mf.auth_rank = new_rank
            state.log("notice", f"Replica rank updated to #{new_rank}, added {added} "
                                "milliseconds of delay.")
    if now < mf.auth_time:
        _cant(state, "Waiting the delay before I can start a new failover.")
        return
    if auth_age > auth_timeout:
        _cant(state, "Failover attempt expired.")
        return
    if not mf.auth_sent:
        topology.current_epoch += 1
        mf.auth_epoch = topology.current_epoch
        state.log("notice", f"Starting a failover election for epoch {mf.auth_epoch}.")
        request = state.header(FAILOVER_AUTH_REQUEST)
        if mf.end:
            request.mflags |= MF_FORCEACK
        state.broadcast(request)
        mf.auth_sent = True
        state.later(update=True, save=True, fsync=True)
        return
    if mf.auth_count >= topology.size // 2 + 1:
        state.log("notice", "Failover election won: I'm the new master.")
        if myself.config_epoch < mf.auth_epoch:
            myself.config_epoch = mf.auth_epoch
            state.log("notice", f"configEpoch set to {myself.config_epoch} after successful "
                                "failover")
        replace_master(state, now)
    else:
        _cant(state, "Waiting for votes, but majority still not reached.")


def _cant(state: ClusterState, reason: str) -> None:
    """Log why no failover happens, once per reason (as Redis logs it)."""
    if state.mf.cant_reason != reason:
        state.mf.cant_reason = reason
        state.log("notice", f"Currently unable to failover: {reason}")


def replace_master(state: ClusterState, now: int) -> None:
    """Redis's clusterFailoverReplaceYourMaster: a master, with the old
    master's slots, told to everybody."""
    topology = state.topology
    myself = topology.myself
    old = myself.master
    if myself.is_master or old is None:
        return
    state.set_as_master(myself)
    state.replicating = None
    state.outbox.append(Replicate(None))
    for slot in range(SLOTS):
        if topology.owners[slot] is old:
            topology.assign(slot, myself)
    state.owner_not_claiming.clear()
    state.update_state(now)
    state.later(save=True, fsync=True)
    state.broadcast_pong(False, now)
    reset_manual(state)


def vote(state: ClusterState, node: Node, request: Message, now: int) -> None:
    """Redis's clusterSendFailoverAuthIfNeeded: a master's vote for a replica."""
    topology = state.topology
    myself = topology.myself
    name = node.name.decode()
    if myself.is_replica or myself.numslots == 0:
        return
    if request.current_epoch < topology.current_epoch:
        state.log("warning", f"Failover auth denied to {name}: reqEpoch "
                             f"({request.current_epoch}) < curEpoch({topology.current_epoch})")
        return
    if topology.last_vote_epoch == topology.current_epoch:
        state.log("warning", f"Failover auth denied to {name}: already voted for epoch "
                             f"{topology.current_epoch}")
        return
    master = node.master
    force = bool(request.mflags & MF_FORCEACK)
    if node.is_master or master is None or (not master.flags & FAIL_FLAG and not force):
        why = ("it is a master node" if node.is_master else "I don't know its master"
               if master is None else "its master is up")
        state.log("warning", f"Failover auth denied to {name}: {why}")
        return
    wait = master.voted_time + state.settings.node_timeout * 2 - now
    if wait > 0:
        state.log("warning", f"Failover auth denied to {name}: can't vote about this master "
                             f"before {wait} milliseconds")
        return
    owners = topology.owners
    for slot in range(SLOTS):
        if not slot_bit(request.myslots, slot):
            continue
        owner = owners[slot]
        if owner is None or state.not_claimed(slot, owner) or owner.config_epoch <= request.config_epoch:
            continue
        state.log("warning", f"Failover auth denied to {name}: slot {slot} epoch "
                             f"({owner.config_epoch}) > reqEpoch ({request.config_epoch})")
        return
    topology.last_vote_epoch = topology.current_epoch
    master.voted_time = now
    state.save_config(True)  # the vote is on disk before it is sent
    state.send(outbound_link(node), state.header(FAILOVER_AUTH_ACK))
    state.log("notice", f"Failover auth granted to {name} for epoch {topology.current_epoch}")
