"""CLUSTER outside cluster mode.

A server started without ``cluster-enabled yes`` answers every CLUSTER
subcommand Redis knows with "This instance has cluster support disabled",
after the usual arity check (as Redis 7+ does: CLUSTER HELP too).  The
subcommands are in the table, so ACL rules name them (``+cluster|info``),
COMMAND INFO lists them and an unknown one gets the "unknown subcommand"
error.  A cluster implementation registers its own handlers in place of
these.
"""

from __future__ import annotations

from ...errors import CLUSTER_DISABLED, CommandError
from ..contract import Ctx, Reply
from ..key_specs import ND
from ..table import command


def _disabled(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER <subcommand> [argument ...]

    Cost: O(1)."""
    raise CommandError(CLUSTER_DISABLED)


@command("cluster", arity=-2, group="cluster", since="3.0.0",
         complexity="Depends on subcommand.",
         summary="A container for Redis Cluster commands", container=True)
def cluster(ctx: Ctx, argv: list[bytes]) -> Reply:
    """CLUSTER subcommand [argument ...]"""


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
    ("slot-stats", -4, "stale", "8.0.0", "Return an array of slot usage statistics for slots "
     "assigned to the current node"),
    ("slots", 2, "stale", "3.0.0", "Get array of Cluster slot to node mappings"),
)

# The subcommands COMMAND INFO gives the nondeterministic_output tip (read from
# redis-server 7.0.15).
_NONDETERMINISTIC = frozenset((
    "count-failure-reports", "bumpepoch", "getkeysinslot", "info", "nodes", "slots", "shards",
    "links", "replicas", "slaves", "slot-stats"))

for _name, _arity, _flags, _since, _summary in _SUBCOMMANDS:
    command(f"cluster|{_name}", arity=_arity, flags=_flags, group="cluster", since=_since,
            complexity="O(1)", summary=_summary,
            tips=(ND,) if _name in _NONDETERMINISTIC else ())(_disabled)

