"""CLUSTER: the subcommands of Redis Cluster.

Each handler first asks the engine's cluster (``ctx.engine.cluster``, the
:class:`~tidelog.commands.contract.Cluster` protocol) whether cluster mode
is on: outside it, every subcommand Redis knows answers "This instance has
cluster support disabled" after the usual arity check (as Redis 7+ does,
CLUSTER HELP too).  Then it reads its arguments with the cursor, in Redis
7.0.15's order and with its errors, and calls the protocol, which holds the
semantics (:class:`tidelog.cluster.control.Control` in cluster mode).  The
subcommands are in the table either way, so ACL rules name them
(``+cluster|info``), COMMAND INFO lists them and an unknown one gets the
"unknown subcommand" error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from ...errors import (
    CLUSTER_COUNTKEYS_SLOT_INVALID,
    CLUSTER_GETKEYS_INVALID,
    CLUSTER_SETSLOT_SYNTAX,
    CLUSTER_SLOT_INVALID,
    CLUSTER_SLOT_STATS_LIMIT,
    CLUSTER_SLOT_STATS_METRIC,
    CLUSTER_SLOT_STATS_REPEATED,
    SYNTAX,
    CommandError,
    cluster_bad_port,
    cluster_range_reversed,
    cluster_slot_stats_reversed,
    subcommand_syntax,
    wrong_arity,
)
from ...keyslot import SLOTS, key_slot
from ...resp.replies import OK, Map, SimpleString, Verbatim
from ...slotstats import order_slots
from ..args import ArgReader, parse_int
from ..contract import Cluster, Ctx, Reply
from ..key_specs import ALL_SHARDS, ND
from ..table import COMMANDS, command


def _cluster(ctx: Ctx) -> Cluster:
    """The engine's cluster, once it said cluster mode is on."""
    cluster = ctx.engine.cluster
    cluster.require()
    return cluster


def _slot(arg: bytes) -> int:
    """A slot number, else "Invalid or out of range slot" (getSlotOrReply)."""
    slot = parse_int(arg, CLUSTER_SLOT_INVALID)
    if not 0 <= slot < SLOTS:
        raise CommandError(CLUSTER_SLOT_INVALID)
    return slot


def _exact(argv: list[bytes], *counts: int) -> None:
    """The argument counts a subcommand takes beyond its table arity
    (clusterCommand's ``c->argc == n`` tests): else Redis's "unknown
    subcommand or wrong number of arguments" error."""
    if len(argv) not in counts:
        raise subcommand_syntax(argv[1], b"CLUSTER")


@command("cluster", arity=-2, group="cluster", since="3.0.0",
         complexity="Depends on subcommand.",
         summary="A container for Redis Cluster commands", container=True, help=(
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current "
    "node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes "
    "of a link",
    "HELP",
    "    Prints this help.",
))
def cluster(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER subcommand [argument ...]"""


# -- the handlers ---------------------------------------------------------------------------
def cluster_help(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER HELP

    Redis 7.0.15's text (on the container's spec), in cluster mode only.
    Cost: O(1)."""
    _cluster(ctx)
    return [SimpleString(line.encode()) for line in COMMANDS["cluster"].help]


def cluster_addslots(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER ADDSLOTS slot [slot ...]

    Every argument is read before any is checked against the slot map.
    Cost: O(N) in the slots named, plus O(16384)."""
    cluster = _cluster(ctx)
    slots = [_slot(arg) for arg in argv[2:]]
    cluster.add_slots(ctx, [(s, s) for s in slots], argv[1].lower() == b"delslots")
    return OK


def cluster_delslots(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER DELSLOTS slot [slot ...]

    Cost: O(N) in the slots named, plus O(16384)."""
    return cluster_addslots(ctx, argv)


def _ranges(argv: list[bytes]) -> Iterator[tuple[int, int]]:
    """The (first, last) pairs of ADDSLOTSRANGE/DELSLOTSRANGE, each read
    when the one before it was checked (as Redis reads and checks them)."""
    r = ArgReader(argv, start=2)
    while r.more():
        start, end = _slot(r.next_bytes()), _slot(r.next_bytes())
        if start > end:
            raise cluster_range_reversed(start, end)
        yield start, end


def cluster_addslotsrange(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER ADDSLOTSRANGE start-slot end-slot [start-slot end-slot ...]

    Cost: O(N) in the slots of the ranges, plus O(16384)."""
    cluster = _cluster(ctx)
    if len(argv) % 2:
        raise wrong_arity(b"cluster|" + argv[1])
    cluster.add_slots(ctx, _ranges(argv), argv[1].lower() == b"delslotsrange")
    return OK


def cluster_delslotsrange(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER DELSLOTSRANGE start-slot end-slot [start-slot end-slot ...]

    Cost: O(N) in the slots of the ranges, plus O(16384)."""
    return cluster_addslotsrange(ctx, argv)


def cluster_flushslots(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER FLUSHSLOTS

    Cost: O(16384)."""
    _cluster(ctx).flush_slots(ctx)
    return OK


def cluster_setslot(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SETSLOT slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE>

    Cost: O(1); NODE: O(keys of the slot) to check none is left, without
    cluster mode's per-slot key index."""
    cluster = _cluster(ctx)
    cluster.check_setslot()
    r = ArgReader(argv, start=2)
    slot = _slot(r.next_bytes())
    action = r.next_upper()
    if action in (b"MIGRATING", b"IMPORTING", b"NODE") and r.remaining() == 1:
        cluster.set_slot(ctx, slot, action, r.next_bytes())
    elif action == b"STABLE" and not r.more():
        cluster.set_slot(ctx, slot, action, None)
    else:
        raise CommandError(CLUSTER_SETSLOT_SYNTAX)
    return OK


def cluster_bumpepoch(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER BUMPEPOCH

    Cost: O(nodes)."""
    return SimpleString(_cluster(ctx).bump_epoch(ctx))


def cluster_info(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER INFO

    Cost: O(16384)."""
    return Verbatim(_cluster(ctx).info(ctx))


def cluster_saveconfig(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SAVECONFIG

    Cost: O(16384 + nodes) (the file's text) plus its write and fsync."""
    _cluster(ctx).save_config(ctx)
    return OK


def cluster_keyslot(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER KEYSLOT key

    Cost: O(N) in the key's length."""
    _cluster(ctx)
    return key_slot(argv[2])


def cluster_countkeysinslot(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER COUNTKEYSINSLOT slot

    Cost: O(1) with cluster mode's per-slot key index."""
    cluster = _cluster(ctx)
    slot = parse_int(argv[2])
    if not 0 <= slot < SLOTS:
        raise CommandError(CLUSTER_COUNTKEYS_SLOT_INVALID)
    return cluster.count_keys_in_slot(ctx, slot)


def cluster_getkeysinslot(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER GETKEYSINSLOT slot count

    Cost: O(count) with cluster mode's per-slot key index."""
    cluster = _cluster(ctx)
    slot, count = parse_int(argv[2]), parse_int(argv[3])
    if not 0 <= slot < SLOTS or count < 0:
        raise CommandError(CLUSTER_GETKEYS_INVALID)
    return cluster.keys_in_slot(ctx, slot, count)


def cluster_meet(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER MEET ip port [cluster-bus-port]

    The bus port defaults to port + 10000.  Cost: O(nodes)."""
    cluster = _cluster(ctx)
    _exact(argv, 4, 5)
    port = _port(argv[3], b"base")
    cport = _port(argv[4], b"bus") if len(argv) == 5 else port + 10000
    cluster.meet(ctx, argv[2], port, cport, argv[3])
    return OK


def _port(arg: bytes, kind: bytes) -> int:
    try:
        return parse_int(arg)
    except CommandError:
        raise cluster_bad_port(kind, arg) from None


def cluster_nodes(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER NODES

    Cost: O(16384 + nodes)."""
    return Verbatim(_cluster(ctx).nodes(ctx))


def cluster_myid(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER MYID

    Cost: O(1)."""
    return _cluster(ctx).myid()


def cluster_myshardid(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER MYSHARDID

    Cost: O(1)."""
    return _cluster(ctx).myshardid()


def cluster_slots(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SLOTS

    Cost: O(16384 + ranges x replicas)."""
    return _cluster(ctx).slots(ctx)


def cluster_shards(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SHARDS

    Cost: O(16384 + nodes)."""
    return _cluster(ctx).shards(ctx)


def cluster_links(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER LINKS

    Cost: O(nodes)."""
    return _cluster(ctx).links(ctx)


def cluster_forget(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER FORGET node-id

    Cost: O(16384 + nodes)."""
    _cluster(ctx).forget(ctx, argv[2])
    return OK


def cluster_replicate(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER REPLICATE node-id

    Cost: O(1)."""
    _cluster(ctx).replicate(ctx, argv[2])
    return OK


def cluster_replicas(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER REPLICAS node-id

    Each replica's CLUSTER NODES line.  Cost: O(replicas x 16384)."""
    return _cluster(ctx).replicas(ctx, argv[2])


def cluster_slaves(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SLAVES node-id

    CLUSTER REPLICAS's old name.  Cost: O(replicas x 16384)."""
    return cluster_replicas(ctx, argv)


def cluster_count_failure_reports(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER COUNT-FAILURE-REPORTS node-id

    Cost: O(reports about the node)."""
    return _cluster(ctx).count_failure_reports(ctx, argv[2])


def cluster_failover(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER FAILOVER [FORCE | TAKEOVER]

    Cost: O(1)."""
    cluster = _cluster(ctx)
    _exact(argv, 2, 3)
    mode = b""
    if len(argv) == 3:
        mode = argv[2].lower()
        if mode not in (b"force", b"takeover"):
            raise CommandError(SYNTAX)
    cluster.failover(ctx, mode.decode())
    return OK


def cluster_set_config_epoch(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SET-CONFIG-EPOCH config-epoch

    Cost: O(1)."""
    cluster = _cluster(ctx)
    cluster.set_config_epoch(ctx, parse_int(argv[2]))
    return OK


def cluster_reset(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER RESET [HARD | SOFT]

    Cost: O(N) in the keys dropped (a replica's), plus O(16384 + nodes)."""
    cluster = _cluster(ctx)
    _exact(argv, 2, 3)
    mode = argv[2].lower() if len(argv) == 3 else b"soft"
    if mode not in (b"hard", b"soft"):
        raise CommandError(SYNTAX)
    cluster.reset(ctx, mode == b"hard")
    return OK


def cluster_slot_stats(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER SLOT-STATS SLOTSRANGE start-slot end-slot | ORDERBY metric [LIMIT limit] [ASC | DESC]

    Per slot of this node's shard, its metrics: ``key-count``, and with
    cluster-slot-stats-enabled ``cpu-usec``, ``network-bytes-in`` and
    ``network-bytes-out`` (:mod:`tidelog.slotstats`).  SLOTSRANGE: the
    shard's slots of the range, ascending; ORDERBY: by one metric (DESC
    unless ASC), ties by slot, at most LIMIT (16384) of them.  Each
    element is ``[slot, {metric: value, ...}]``.  Argument errors in
    Valkey 9.1's order.  Cost: O(16384) to find the shard's slots, plus
    O(N log N) in them with ORDERBY."""
    cluster = _cluster(ctx)
    stats = ctx.engine.slot_stats
    argc = len(argv)
    how = argv[2].lower()
    if how == b"slotsrange" and argc == 5:
        start, end = _slot(argv[3]), _slot(argv[4])
        if start > end:
            raise cluster_slot_stats_reversed(start, end)
        slots = [slot for slot in cluster.shard_slots() if start <= slot <= end]
    elif how == b"orderby":
        metric = argv[3].lower()
        if metric not in stats.metrics():
            raise CommandError(CLUSTER_SLOT_STATS_METRIC)
        limit = descending = None
        args = ArgReader(argv, 4)
        while args.more():
            word = args.next_upper()
            if word == b"LIMIT":
                value = args.next_int(CLUSTER_SLOT_STATS_LIMIT)
                if not 1 <= value <= SLOTS:
                    raise CommandError(CLUSTER_SLOT_STATS_LIMIT)
                if limit is not None:
                    raise CommandError(CLUSTER_SLOT_STATS_REPEATED)
                limit = value
            elif word in (b"ASC", b"DESC"):
                if descending is not None:
                    raise CommandError(CLUSTER_SLOT_STATS_REPEATED)
                descending = word == b"DESC"
            else:
                raise CommandError(SYNTAX)
        owned = cluster.shard_slots()
        values = [stats.value(metric, slot, partial(cluster.count_keys_in_slot, ctx))
                  for slot in owned]
        slots = order_slots(owned, values, SLOTS if limit is None else limit,
                            descending is not False)
    else:
        raise subcommand_syntax(argv[1], b"CLUSTER")
    key_count = partial(cluster.count_keys_in_slot, ctx)
    return [[slot, Map(stats.row(slot, key_count))] for slot in slots]


_ADMIN = "admin stale no_async_loading"
# (name, arity, flags, since, summary), as Redis's table has them.
_SUBCOMMANDS = (
    ("addslots", -3, _ADMIN, "3.0.0", "Assign new hash slots to a node"),
    ("addslotsrange", -4, _ADMIN, "7.0.0", "Assign new hash slot ranges to a node"),
    ("bumpepoch", 2, _ADMIN, "3.0.0", "Advance the cluster config epoch"),
    ("count-failure-reports", 3, "admin stale", "3.0.0",
     "Return the number of active failure reports active for a node"),
    ("countkeysinslot", 3, "stale", "3.0.0", "Return the number of keys in a hash slot"),
    ("delslots", -3, _ADMIN, "3.0.0", "Set hash slots as unbound for a node"),
    ("delslotsrange", -4, _ADMIN, "7.0.0", "Set hash slot ranges as unbound for a node"),
    ("failover", -2, _ADMIN, "3.0.0", "Force a replica to perform a manual failover of its master"),
    ("flushslots", 2, _ADMIN, "3.0.0", "Delete a node's own slots information"),
    ("forget", 3, _ADMIN, "3.0.0", "Remove a node from the nodes table"),
    ("getkeysinslot", 4, "stale", "3.0.0", "Return the key names in a hash slot"),
    ("help", 2, "loading stale", "5.0.0", "Show helpful text about the different subcommands"),
    ("info", 2, "stale", "3.0.0", "Provides info about Redis Cluster node state"),
    ("keyslot", 3, "stale", "3.0.0", "Returns the hash slot of the specified key"),
    ("links", 2, "stale", "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster"),
    ("meet", -4, _ADMIN, "3.0.0", "Force a node cluster to handshake with another node"),
    ("myid", 2, "stale", "3.0.0", "Return the node id"),
    ("myshardid", 2, "stale", "7.2.0", "Return the node shard id"),
    ("nodes", 2, "stale", "3.0.0", "Get Cluster config for the node"),
    ("replicas", 3, "admin stale", "5.0.0", "List replica nodes of the specified master node"),
    ("replicate", 3, _ADMIN, "3.0.0", "Reconfigure a node as a replica of the specified master node"),
    ("reset", -2, "admin noscript stale", "3.0.0", "Reset a Redis Cluster node"),
    ("saveconfig", 2, _ADMIN, "3.0.0", "Forces the node to save cluster state on disk"),
    ("set-config-epoch", 3, _ADMIN, "3.0.0", "Set the configuration epoch in a new node"),
    ("setslot", -4, _ADMIN, "3.0.0", "Bind a hash slot to a specific node"),
    ("shards", 2, "stale", "7.0.0", "Get array of cluster slots to node mappings"),
    ("slaves", 3, "admin stale", "3.0.0", "List replica nodes of the specified master node"),
    ("slot-stats", -4, "loading stale", "8.2.0", "Return an array of slot usage statistics for slots "
     "assigned to the current node"),
    ("slots", 2, "stale", "3.0.0", "Get array of Cluster slot to node mappings"),
)

# The subcommands COMMAND INFO gives the nondeterministic_output tip (read from
# redis-server 7.0.15).
_NONDETERMINISTIC = frozenset((
    "count-failure-reports", "bumpepoch", "getkeysinslot", "info", "nodes", "slots", "shards",
    "links", "replicas", "slaves", "slot-stats"))

_HANDLERS: dict[str, Callable[[Ctx, list[bytes]], Reply]] = {
    name: globals()["cluster_" + name.replace("-", "_")] for name, *_ in _SUBCOMMANDS}

# SLOT-STATS (Redis 8.2, as redis.io's page and Valkey 9.1's COMMAND INFO
# give it): asked of every shard.
_COMPLEXITY = {"slot-stats": "O(N) where N is the total number of slots based on arguments. "
                             "O(N*log(N)) with ORDERBY subcommand."}
_TIPS = {"slot-stats": (ND, ALL_SHARDS)}

for _name, _arity, _flags, _since, _summary in _SUBCOMMANDS:
    command(f"cluster|{_name}", arity=_arity, flags=_flags, group="cluster", since=_since,
            complexity=_COMPLEXITY.get(_name, "O(1)"), summary=_summary,
            tips=_TIPS.get(_name, (ND,) if _name in _NONDETERMINISTIC else ()))(
                _HANDLERS[_name])
