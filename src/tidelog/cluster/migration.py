"""Replica migration, for :mod:`tidelog.cluster.state`.

As Redis 7.0.15 (the orphaned-master count in ``clusterCron`` and
``clusterHandleSlaveMigration``; read for facts, written anew):

- a master is *orphaned* when it serves slots, is not failing (FAIL or
  PFAIL), has no replica that is not failing, and is flagged MIGRATE_TO:
  it had a replica once, or it is a replica promoted in place of a master
  that had some, or it got its first slot while some master had replicas
  (see :meth:`tidelog.cluster.nodes.Topology.assign`);
- a replica considers moving (with ``cluster-allow-replica-migration
  yes``) when some master is orphaned, some master has at least two
  working replicas, and its own master has as many as any: then, if the
  cluster state is ok and its master keeps more than
  ``cluster-migration-barrier`` working replicas without it, the replica
  with the smallest node id among the replicas of the masters with the
  most working replicas moves to the first orphaned master found, once
  that master has been orphaned for longer than
  :data:`MIGRATION_DELAY_MS` (so that during a failover the natural
  replicas of a new master have the time to announce it).  The delay
  counts one unbroken spell: a master that is not orphaned at a tick has
  its start time cleared (Redis clears it only when it runs the migration
  check, so a master orphaned again after a check-free pause may be joined
  at once there);
- moving is CLUSTER REPLICATE of that master: replicate it, save
  nodes.conf.
"""

from __future__ import annotations

from typing import Protocol

from .messages import FAIL_FLAG, HANDSHAKE, MASTER, MIGRATE_TO, NOADDR, PFAIL, SLAVE
from .nodes import Node, Topology

MIGRATION_DELAY_MS = 5000
"""A master must be orphaned this long before a replica moves to it."""


class Settings(Protocol):
    migration_barrier: int
    allow_replica_migration: bool


class ClusterState(Protocol):
    """What this module uses of :class:`tidelog.cluster.state.ClusterState`."""

    @property
    def topology(self) -> Topology: ...
    @property
    def settings(self) -> Settings: ...

    def log(self, level: str, text: str) -> None: ...
    def later(self, *, update: bool = False, save: bool = False, fsync: bool = False,
              handle_failover: bool = False) -> None: ...
    def follow(self, master: Node, now: int) -> None: ...


def _failing(node: Node) -> bool:
    return bool(node.flags & (FAIL_FLAG | PFAIL))


def _orphan(node: Node) -> bool:
    """Not a replica, not failing, MIGRATE_TO, no working replica (with or
    without slots)."""
    return (not node.is_replica and not _failing(node) and bool(node.flags & MIGRATE_TO)
            and working_replicas(node) == 0)


def working_replicas(master: Node) -> int:
    """The replicas of ``master`` not failing. Cost: O(replicas)."""
    return sum(1 for r in master.replicas if not _failing(r))


def handle(state: ClusterState, now: int) -> None:
    """Called at every tick on a replica: move to an orphaned master when
    this replica is the one to go. Cost: O(nodes + replicas)."""
    topology = state.topology
    myself = topology.myself
    master = myself.master
    if not myself.is_replica or master is None or not state.settings.allow_replica_migration:
        return
    # what clusterCron counts: the orphans, the most working replicas of a
    # master, those of this replica's master
    orphans = most = mine = 0
    for node in topology.nodes.values():
        flags = node.flags
        if flags & SLAVE or flags & (FAIL_FLAG | PFAIL) or not flags & MIGRATE_TO:
            node.orphaned_time = 0  # not orphaned: the delay counts one unbroken spell
        if node is myself or not flags & MASTER or flags & (FAIL_FLAG | PFAIL | HANDSHAKE | NOADDR):
            continue
        ok = working_replicas(node)
        if ok:
            node.orphaned_time = 0
        elif node.numslots > 0 and flags & MIGRATE_TO:
            orphans += 1
        most = max(most, ok)
        if node is master:
            mine = ok
    if orphans == 0 or most < 2 or mine != most:
        return
    migrate(state, most, now)


def migrate(state: ClusterState, most: int, now: int) -> None:
    """Redis's clusterHandleSlaveMigration: ``most`` is the greatest number
    of working replicas of one master. Cost: O(nodes + replicas)."""
    topology = state.topology
    myself = topology.myself
    master = myself.master
    if not topology.state_ok or master is None:
        return
    if working_replicas(master) <= state.settings.migration_barrier:
        return  # its master would be left with too few
    target: Node | None = None
    candidate = myself
    for node in topology.nodes.values():
        ok = working_replicas(node) if node.is_master else 0
        if _orphan(node):
            if target is None and node.numslots > 0:
                target = node
            if not node.orphaned_time:
                node.orphaned_time = now
        else:
            node.orphaned_time = 0
        if ok == most:
            for replica in node.replicas:
                if replica.name < candidate.name:
                    candidate = replica
    if target is None or candidate is not myself or now - target.orphaned_time <= MIGRATION_DELAY_MS:
        return
    state.log("warning", f"Migrating to orphaned master {target.name.decode()}")
    state.follow(target, now)
    state.later(update=True, save=True)
