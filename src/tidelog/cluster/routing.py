"""Which node serves a command: Redis's ``getNodeByQuery`` over a Topology.

The engine asks its :class:`~tidelog.engine.services.SlotRouter` before a
client's command runs (admission), before a script's command runs, and for
the clients blocked on keys (on each tick of the cluster's timer).
:class:`Router` answers with the error the client gets instead of running
the command (``-MOVED``, ``-ASK``, ``-CROSSSLOT``, ``-TRYAGAIN``,
``-CLUSTERDOWN``) or None when this node serves it.

The rules, in Redis's order (7.0.15's ``getNodeByQuery``):

* the keys are the command's (its key specs or key finder, as COMMAND
  GETKEYS finds them, shard channels included), or at EXEC every queued
  command's;
* the first key's slot unassigned: ``CLUSTERDOWN Hash slot not served``;
  a key of another slot: ``CROSSSLOT``;
* no key at all: served here, whatever the cluster's state;
* the cluster down: ``CLUSTERDOWN The cluster is down``, unless the command
  is sharded pub/sub (``cluster-allow-pubsubshard-when-down``, yes by
  default) or a read and ``cluster-allow-reads-when-down`` is on (a write
  then gets "... only accepts read commands");
* MIGRATE in an open slot (migrating or importing): served here;
* a migrating slot with keys missing here: ``ASK`` to the target when none
  of the keys is here, ``TRYAGAIN`` when some are;
* an importing slot, the client having sent ASKING (or the command flagged
  ``asking``, RESTORE-ASKING): served here, but ``TRYAGAIN`` for several
  keys some of which are missing;
* a replica, its master serving the slot, a READONLY client (or sharded
  pub/sub) and no write: served here;
* otherwise served here if this node owns the slot, else ``MOVED`` to its
  owner.

Keys are looked up in the client's database (database 0: cluster mode has
no other) without touching them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .. import errors
from ..commands import table
from ..commands.contract import ClientState
from ..commands.key_specs import command_key_positions, fixed_key_ranges
from ..keyslot import key_slot
from .nodes import Node, Topology

# The sharded pub/sub commands: their channels are routed as keys.
_SHARD_PUBSUB = frozenset({"spublish", "ssubscribe", "sunsubscribe"})


def key_positions(spec: table.CommandSpec, argv: list[bytes],
                  ranges: list[tuple[int, int, int]] | None) -> list[int]:
    """Where the command's keys are (as COMMAND GETKEYS finds them), with its
    ``fixed_key_ranges(spec, not_keys=True)``.  O(keys)."""
    if ranges is None:
        return [at for at, _ in command_key_positions(spec, argv)]
    found: list[int] = []
    n = len(argv)
    for first, lastkey, step in ranges:
        last = first + lastkey if lastkey >= 0 else n + lastkey
        found.extend(range(first, min(last, n - 1) + 1, step))
    return found


class KeyLookup(Protocol):
    """What the router reads of a database: whether a key is there."""

    def peek(self, key: bytes) -> object: ...


class Refusal:
    """Why a command is not served here: the error text (without the
    leading ``-``) and a code telling scripts' checks which it is."""

    __slots__ = ("code", "message")

    MOVED, ASK, CROSSSLOT, UNSTABLE, DOWN, DOWN_READ_ONLY, UNBOUND = range(7)

    def __init__(self, code: int, message: bytes) -> None:
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"Refusal({self.message!r})"


class Router:
    """Redis's getNodeByQuery over ``topology``, with the settings that
    change its answers.  ``endpoint_type`` is cluster-preferred-endpoint-type
    (``ip``, ``hostname`` or ``unknown-endpoint``)."""

    def __init__(self, topology: Topology, *, allow_reads_when_down: bool = False,
                 allow_pubsubshard_when_down: bool = True, endpoint_type: str = "ip") -> None:
        self.topology = topology
        self.allow_reads_when_down = allow_reads_when_down
        self.allow_pubsubshard_when_down = allow_pubsubshard_when_down
        self.endpoint_type = endpoint_type
        self.tls_cluster = False
        """tls-cluster: nodes' ports are TLS ports (see :meth:`port`)."""
        # per command name: its fixed_key_ranges(not_keys=True) (a command's key specs do
        # not change while the server runs)
        self._positions: dict[str, list[tuple[int, int, int]] | None] = {}

    # -- the decision ---------------------------------------------------------

    def query(self, client: ClientState, spec: table.CommandSpec, argv: list[bytes],
              db: KeyLookup, write: bool | None = None) -> tuple[Refusal | None, int]:
        """(None or why not served here, the commands' slot or -1).
        ``write``: whether the command writes, when its flags do not say
        (a script's shebang flags: Redis's getCommandFlags).  Cost: O(keys of
        the command, or of every queued command at EXEC)."""
        topology = self.topology
        myself = topology.myself
        if spec.name == "exec":
            if client.multi is None:
                return None, -1
            commands: Iterable[tuple[table.CommandSpec | None, list[bytes]]] = (
                (table.lookup(queued), queued) for queued in client.multi)
        else:
            commands = ((spec, argv),)
        owner: Node | None = None
        slot = -1
        first_key = b""
        multiple_keys = migrating = importing = shard_pubsub = False
        is_write = False
        missing = existing = 0
        for cmd, cmd_argv in commands:
            if cmd is None:
                continue
            if "write" in cmd.flags:
                is_write = True
            is_shard = cmd.name in _SHARD_PUBSUB
            shard_pubsub = shard_pubsub or is_shard
            name = cmd.name
            if name in self._positions:
                ranges = self._positions[name]
            else:
                ranges = self._positions[name] = fixed_key_ranges(cmd, not_keys=True)
            for at in key_positions(cmd, cmd_argv, ranges):
                key = cmd_argv[at]
                this_slot = key_slot(key)
                if owner is None:
                    slot, first_key = this_slot, key
                    owner = topology.owners[slot]
                    if owner is None:
                        return Refusal(Refusal.UNBOUND, errors.CLUSTERDOWN_UNBOUND), slot
                    if owner is myself and slot in topology.migrating_to:
                        migrating = True
                    elif slot in topology.importing_from:
                        importing = True
                elif this_slot != slot:
                    return Refusal(Refusal.CROSSSLOT, errors.CROSSSLOT), -1
                elif key != first_key:
                    multiple_keys = True
                if (migrating or importing) and not is_shard:
                    if db.peek(key) is None:
                        missing += 1
                    else:
                        existing += 1
        if owner is None:
            return None, -1
        if write is not None:
            is_write = write
        if not topology.state_ok:
            if shard_pubsub:
                if not self.allow_pubsubshard_when_down:
                    return Refusal(Refusal.DOWN, errors.CLUSTERDOWN), slot
            elif not self.allow_reads_when_down:
                return Refusal(Refusal.DOWN, errors.CLUSTERDOWN), slot
            elif is_write:
                return Refusal(Refusal.DOWN_READ_ONLY, errors.CLUSTERDOWN_READ_ONLY), slot
        if (migrating or importing) and spec.name == "migrate":
            return None, slot
        if migrating and missing:
            if existing:
                return Refusal(Refusal.UNSTABLE, errors.TRYAGAIN), slot
            target = topology.migrating_to[slot]
            return Refusal(Refusal.ASK, errors.ask(slot, self.endpoint(target),
                                                   self.port(target, client))), slot
        if importing and (client.cluster_asking or "asking" in spec.flags):
            if multiple_keys and missing:
                return Refusal(Refusal.UNSTABLE, errors.TRYAGAIN), slot
            return None, slot
        if (client.cluster_readonly or shard_pubsub) and not is_write and \
                myself.is_replica and myself.master is owner:
            return None, slot
        if owner is not myself:
            return Refusal(Refusal.MOVED, errors.moved(slot, self.endpoint(owner),
                                                       self.port(owner, client))), slot
        return None, slot

    def port(self, node: Node, client: ClientState) -> int:
        """The node's port as redirections give it: under tls-cluster yes a
        client of the plain port is given the node's plain port (its pport,
        when the node announced one), as Redis 7.0 does."""
        if self.tls_cluster and not client.tls and node.pport:
            return node.pport
        return node.port

    def endpoint(self, node: Node) -> bytes:
        """The node's address as redirections give it (Redis's
        getPreferredEndpoint): its IP, its hostname (``?`` when it has
        none) or an empty string."""
        if self.endpoint_type == "hostname":
            return node.hostname or b"?"
        if self.endpoint_type == "unknown-endpoint":
            return b""
        return node.ip

    # -- what the engine asks (engine.services.SlotRouter) --------------------

    def check(self, client: ClientState, spec: table.CommandSpec, argv: list[bytes],
              db: KeyLookup, write: bool | None = None) -> bytes | None:
        """A client's command: the error it gets instead, or None; notes the
        command's slot in ``client.cluster_slot`` (a script's commands are
        held to it).  ``write`` as :meth:`query`'s.  Cost: that of
        :meth:`query`."""
        refusal, slot = self.query(client, spec, argv, db, write)
        client.cluster_slot = slot
        return None if refusal is None else refusal.message

    def check_script_call(self, caller: ClientState, spec: table.CommandSpec,
                          argv: list[bytes], db: KeyLookup, cross_slot: bool) -> bytes | None:
        """A command a script runs for ``caller`` (the client running the
        script, whose READONLY and ASKING count): Redis's
        scriptVerifyClusterState.  ``cross_slot``: the script may touch keys
        of several slots of this node (no shebang, or allow-cross-slot-keys).
        Cost: that of :meth:`query`."""
        refusal, slot = self.query(caller, spec, argv, db)
        if refusal is not None:
            if refusal.code == Refusal.DOWN_READ_ONLY:
                return errors.SCRIPT_CLUSTER_DOWN_READ_ONLY
            if refusal.code == Refusal.DOWN:
                return errors.SCRIPT_CLUSTER_DOWN
            return errors.SCRIPT_NON_LOCAL_KEY
        if slot != -1 and not cross_slot:
            if caller.cluster_slot == -1:
                caller.cluster_slot = slot
            elif caller.cluster_slot != slot:
                return errors.SCRIPT_CROSS_SLOT
        return None

    def blocked_refusal(self, client: ClientState, keys: Iterable[bytes],
                        db: KeyLookup, is_write: bool) -> bytes | None:
        """A client blocked on ``keys``: the error that ends its wait when
        their slot is no longer served here or the cluster is down (Redis's
        clusterRedirectBlockedClientIfNeeded), or None.  Cost: O(keys)."""
        topology = self.topology
        myself = topology.myself
        if not topology.state_ok:
            # even when reads are allowed: a write would have to wake it
            return errors.CLUSTERDOWN
        for key in keys:
            slot = key_slot(key)
            owner = topology.owners[slot]
            if owner is None:
                return errors.CLUSTERDOWN_UNBOUND
            if owner is myself:
                continue
            if client.cluster_readonly and not is_write and myself.is_replica and \
                    myself.master is owner:
                continue
            if slot in topology.importing_from:
                continue
            return errors.moved(slot, self.endpoint(owner), self.port(owner, client))
        return None
