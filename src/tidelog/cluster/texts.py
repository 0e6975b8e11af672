"""The node table as text: CLUSTER NODES lines and the nodes.conf file.

One line per node, as Redis 7.0.15 writes it for CLUSTER NODES and in
nodes.conf::

    <id> <ip>:<port>@<cport>[,<hostname>] <flags> <master-id|-> <ping-sent>
    <pong-recv> <config-epoch> <connected|disconnected> <slot ranges> ...

(on one line).  ``flags`` is a comma list of ``myself``, ``master``,
``slave``, ``fail?``, ``fail``, ``handshake``, ``noaddr``, ``nofailover``, or
``noflags``; a replica prints its master's config epoch; the open slots of
this node (``[slot->-id]`` migrating, ``[slot-<-id]`` importing) follow its
ranges, on its own line only.  nodes.conf is the same lines without the
nodes still in handshake, then ``vars currentEpoch N lastVoteEpoch N``
(https://redis.io/docs/latest/commands/cluster-nodes/ and
https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/).
Loading also reads the form Redis 7.2 and later write, with aux fields after
the hostname (``ip:port@cport,hostname,shard-id=...,nodename=...``).

The other replies of the node table are here too, as reply values (the
types of :mod:`tidelog.resp.replies`, so RESP2 and RESP3 both come out as
Redis writes them): CLUSTER SLOTS, SHARDS (7.0's shape), LINKS, and the
text of CLUSTER INFO.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

from ..resp.replies import Map
from .actions import Link
from .messages import (
    FAIL_FLAG,
    HANDSHAKE,
    MASTER,
    MIGRATE_TO,
    MYSELF,
    NAME_LEN,
    NOADDR,
    NOFAILOVER,
    PFAIL,
    SLAVE,
    TYPE_NAMES,
)
from .nodes import Node, Topology

_FLAG_NAMES = ((MYSELF, "myself"), (MASTER, "master"), (SLAVE, "slave"), (PFAIL, "fail?"),
               (FAIL_FLAG, "fail"), (HANDSHAKE, "handshake"), (NOADDR, "noaddr"),
               (NOFAILOVER, "nofailover"))
_FLAG_BITS = {name: bit for bit, name in _FLAG_NAMES}


def flags_text(flags: int) -> str:
    """The flags field of a node's line. Cost: O(1)."""
    names = [name for bit, name in _FLAG_NAMES if flags & bit]
    return ",".join(names) if names else "noflags"


def owner_runs(topology: Topology) -> list[tuple[Node | None, int, int]]:
    """The slot map as runs of one owner: ``(owner, first, last)``, in slot
    order (owner None: unassigned).  Cost: O(16384), about 0.3 ms."""
    runs: list[tuple[Node | None, int, int]] = []
    start = 0
    for owner, group in groupby(topology.owners):  # (a Node is equal only to itself)
        end = start + len(list(group))
        runs.append((owner, start, end - 1))
        start = end
    return runs


def bitmap_ranges(bits: int) -> list[tuple[int, int]]:
    """The runs of set bits of a slot bitmap read as one integer (bit ``s``
    is slot ``s``), as (first, last) slots. Cost: O(runs x 2 KB), at C speed."""
    ranges = []
    while bits:
        first = (bits & -bits).bit_length() - 1
        rest = bits >> first
        ones = ((rest ^ (rest + 1)) >> 1).bit_length()  # the run's length
        ranges.append((first, first + ones - 1))
        bits = (rest >> ones) << (first + ones)
    return ranges


MANY_RUNS = 256
"""Past this many slot ranges, one pass over the slot map is the quicker way."""


def slot_ranges_by_node(topology: Topology) -> dict[Node, list[tuple[int, int]]]:
    """Each owner's slot ranges: from the owners' bitmaps (about 0.05 ms for a
    few ranges each), or, when the map is in many pieces, from one pass
    over it (about 0.6 ms). Cost: O(nodes x 2 KB + 16384)."""
    bitmaps = {node: int.from_bytes(node.slots, "little")
               for node in topology.nodes.values() if node.numslots}
    if sum((bits ^ (bits << 1)).bit_count() for bits in bitmaps.values()) <= 2 * MANY_RUNS:
        return {node: bitmap_ranges(bits) for node, bits in bitmaps.items()}
    ranges: dict[Node, list[tuple[int, int]]] = {}
    for owner, first, last in owner_runs(topology):
        if owner is not None:
            ranges.setdefault(owner, []).append((first, last))
    return ranges


def client_port(node: Node, plain: bool) -> int:
    """The port a client is given for ``node``: its plain port (pport) for
    ``plain`` (a client of the plain port under tls-cluster yes) when the
    node announced one, else its port (7.0.15's use_pport)."""
    return node.pport if plain and node.pport else node.port


def node_line(topology: Topology, node: Node,
              ranges: dict[Node, list[tuple[int, int]]] | None = None,
              plain: bool = False) -> str:
    """The line of one node (no newline); ``ranges``: every node's slot
    ranges, when the caller has them; ``plain``: see :func:`client_port`.
    Cost: O(16384) without them."""
    address = f"{node.ip.decode('latin-1')}:{client_port(node, plain)}@{node.cport}"
    if node.hostname:
        address += "," + node.hostname.decode("latin-1")
    master = node.master.name.decode() if node.master is not None else "-"
    epoch = topology.master_of(node).config_epoch
    connected = node.link is not None or node.is_myself
    parts = [node.name.decode(), address, flags_text(node.flags), master, str(node.ping_sent),
             str(node.pong_received), str(epoch), "connected" if connected else "disconnected"]
    if node.numslots:  # a replica's too: ADDSLOTS on a replica is taken (until gossip fixes it)
        mine = topology.slot_ranges(node) if ranges is None else ranges.get(node, [])
        parts += [f"{a}" if a == b else f"{a}-{b}" for a, b in mine]
    if node.is_myself:  # by slot; a slot both migrating and importing shows the first
        migrating, importing = topology.migrating_to, topology.importing_from
        for slot in sorted(migrating.keys() | importing.keys()):
            if slot in migrating:
                parts.append(f"[{slot}->-{migrating[slot].name.decode()}]")
            else:
                parts.append(f"[{slot}-<-{importing[slot].name.decode()}]")
    return " ".join(parts)


def nodes_text(topology: Topology, plain: bool = False) -> str:
    """CLUSTER NODES: every node's line, each ending in a newline (``plain``:
    see :func:`client_port`).  Cost: O(16384 + nodes)."""
    ranges = slot_ranges_by_node(topology)
    return "".join(node_line(topology, n, ranges, plain) + "\n"
                   for n in topology.nodes.values())


def nodes_conf(topology: Topology) -> str:
    """The text of nodes.conf: the lines of the nodes out of handshake,
    then the epochs. Cost: O(16384 + nodes)."""
    ranges = slot_ranges_by_node(topology)
    lines = [node_line(topology, n, ranges) for n in topology.nodes.values()
             if not n.flags & HANDSHAKE]
    lines.append(f"vars currentEpoch {topology.current_epoch} "
                 f"lastVoteEpoch {topology.last_vote_epoch}")
    return "\n".join(lines) + "\n"


def _name(text: str) -> bytes:
    if len(text) != NAME_LEN or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"bad node id {text!r}")
    return text.encode()


def _int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"bad {what} {text!r}") from None
    if value < 0:
        raise ValueError(f"bad {what} {text!r}")
    return value


def _slot(text: str) -> int:
    slot = _int(text, "slot")
    if slot >= 16384:
        raise ValueError(f"slot {text!r} out of range")
    return slot


def _address(node: Node, text: str) -> None:
    """``ip:port@cport[,hostname[,key=value...]]`` into ``node``."""
    head, _, aux = text.partition(",")
    host_port, at, cport = head.rpartition("@")
    if not at:
        raise ValueError(f"bad address {text!r}")
    ip, colon, port = host_port.rpartition(":")
    if not colon:
        raise ValueError(f"bad address {text!r}")
    node.ip = ip.encode("latin-1")
    node.port = _int(port, "port")
    node.cport = _int(cport, "bus port")
    if aux:
        fields = aux.split(",")
        if "=" not in fields[0]:
            node.hostname = fields.pop(0).encode("latin-1")
        for field in fields:
            key, eq, value = field.partition("=")
            if not eq:
                raise ValueError(f"bad aux field {field!r}")
            if key == "shard-id":
                node.shard_id = value.encode()
            elif key == "nodename":
                node.human_nodename = value.encode("latin-1")
            elif key == "tls-port":
                node.pport = _int(value, "tls port") if value else 0
            # other aux fields (tcp-port, ...) are Redis's to keep: ignored


def _node(nodes: dict[bytes, Node], name: bytes) -> Node:
    """The node of that name, made (no address, no flags yet) on first mention."""
    node = nodes.get(name)
    if node is None:
        node = nodes[name] = Node(name, 0)
    return node


def load_nodes_conf(text: str) -> Topology:
    """The node table a nodes.conf holds. Raises ValueError on a broken
    file: a line with too few fields, a bad id, address, flag, number or slot,
    no ``myself`` node or two of them.  Cost: O(size of the file)."""
    nodes: dict[bytes, Node] = {}
    myself: Node | None = None
    current_epoch = last_vote_epoch = 0
    owned: list[tuple[Node, int, int]] = []
    migrating: list[tuple[int, bytes]] = []
    importing: list[tuple[int, bytes]] = []
    for number, line in enumerate(text.splitlines(), 1):
        argv = line.split()
        if not argv:
            continue
        try:
            if argv[0] == "vars":
                for key, value in zip(argv[1::2], argv[2::2], strict=False):
                    if key == "currentEpoch":
                        current_epoch = _int(value, "currentEpoch")
                    elif key == "lastVoteEpoch":
                        last_vote_epoch = _int(value, "lastVoteEpoch")
                continue
            if len(argv) < 8:
                raise ValueError("a node's line has fewer than 8 fields")
            node = _node(nodes, _name(argv[0]))
            _address(node, argv[1])
            flags = 0
            for flag in argv[2].split(","):
                if flag == "noflags":
                    continue
                if flag not in _FLAG_BITS:
                    raise ValueError(f"unknown flag {flag!r}")
                flags |= _FLAG_BITS[flag]
            node.flags = flags
            if flags & MYSELF:
                if myself is not None:
                    raise ValueError("two nodes flagged myself")
                myself = node
            if argv[3] != "-":
                master = _node(nodes, _name(argv[3]))
                node.master = master
                if node not in master.replicas:
                    master.replicas.append(node)
            # ping-sent and pong-recv are the writer's clock: a loaded node
            # starts with neither, as Redis's loader sets them afresh.
            _int(argv[4], "ping time")
            _int(argv[5], "pong time")
            node.config_epoch = _int(argv[6], "config epoch")
            if argv[7] not in ("connected", "disconnected"):
                raise ValueError(f"bad link state {argv[7]!r}")
            for item in argv[8:]:
                if item.startswith("["):
                    body = item.strip("[]")
                    if "->-" in body:
                        where, _, other = body.partition("->-")
                        migrating.append((_slot(where), _name(other)))
                    elif "-<-" in body:
                        where, _, other = body.partition("-<-")
                        importing.append((_slot(where), _name(other)))
                    else:
                        raise ValueError(f"bad open slot {item!r}")
                    continue
                first, dash, last = item.partition("-")
                start = _slot(first)
                end = _slot(last) if dash else start
                if end < start:
                    raise ValueError(f"bad slot range {item!r}")
                owned.append((node, start, end))
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}") from None
    if myself is None:
        raise ValueError("no node is flagged myself")
    topology = Topology(myself=myself)
    for node in nodes.values():
        if not node.flags & (MASTER | SLAVE):
            node.flags |= SLAVE if node.master is not None else MASTER
        topology.add_node(node)
    for node, start, end in owned:
        for slot in range(start, end + 1):
            topology.assign(slot, node)
    for node in nodes.values():
        # MIGRATE_TO is not in the file: after a load, the masters with replicas have it
        node.flags = node.flags | MIGRATE_TO if node.replicas else node.flags & ~MIGRATE_TO
    for slot, name in migrating:
        topology.migrating_to[slot] = _node(nodes, name)
        topology.add_node(nodes[name])
    for slot, name in importing:
        topology.importing_from[slot] = _node(nodes, name)
        topology.add_node(nodes[name])
    topology.current_epoch = current_epoch
    topology.last_vote_epoch = last_vote_epoch
    return topology


# -- CLUSTER SLOTS, SHARDS, LINKS, INFO --------------------------------------------------
def preferred_endpoint(node: Node, endpoint_type: str) -> bytes:
    """The address clients are given for ``node`` under
    cluster-preferred-endpoint-type: its ip, its hostname (``?`` when it has
    none), or the empty string.  Cost: O(1)."""
    if endpoint_type == "hostname":
        return node.hostname or b"?"
    if endpoint_type == "unknown-endpoint":
        return b""
    return node.ip


def _slots_node(node: Node, endpoint_type: str, plain: bool = False) -> list[Any]:
    """``[endpoint, port, id, {other endpoints}]`` of one node in CLUSTER SLOTS
    (the endpoint is a null under ``unknown-endpoint``)."""
    if endpoint_type == "hostname":
        endpoint: bytes | None = node.hostname or b"?"
    elif endpoint_type == "unknown-endpoint":
        endpoint = None
    else:
        endpoint = node.ip
    extra: list[tuple[Any, Any]] = []
    if endpoint_type != "ip":
        extra.append((b"ip", node.ip))
    if endpoint_type != "hostname" and node.hostname:
        extra.append((b"hostname", node.hostname))
    return [endpoint, client_port(node, plain), node.name, Map(extra)]


def slots_reply(topology: Topology, endpoint_type: str, my_offset: int,
                plain: bool = False) -> list[Any]:
    """CLUSTER SLOTS: one entry per run of slots with the same owner,
    ``[first, last, master, replica, ...]``; a replica that failed or has
    not replicated anything yet (offset 0; ``my_offset`` is this node's) is
    left out; ``plain``: see :func:`client_port`.  Cost: O(16384 + ranges x
    replicas)."""
    reply: list[Any] = []
    for owner, start, end in owner_runs(topology):
        if owner is not None:
            entry: list[Any] = [start, end, _slots_node(owner, endpoint_type, plain)]
            for replica in owner.replicas:
                offset = my_offset if replica.is_myself else replica.repl_offset
                if not replica.flags & FAIL_FLAG and offset != 0:
                    entry.append(_slots_node(replica, endpoint_type, plain))
            reply.append(entry)
    return reply


def _shard_node(node: Node, endpoint_type: str, my_offset: int, tls_cluster: bool) -> Map:
    """One node of a CLUSTER SHARDS shard (7.0's fields, in its order;
    under ``tls_cluster`` the node's port is its TLS port, its pport the
    plain one)."""
    offset = my_offset if node.is_myself else node.repl_offset
    items: list[tuple[Any, Any]] = [(b"id", node.name)]
    plain_port, tls_port = (node.pport, node.port) if tls_cluster else (node.port, 0)
    if plain_port:
        items.append((b"port", plain_port))
    if tls_port:
        items.append((b"tls-port", tls_port))
    items += [(b"ip", node.ip), (b"endpoint", preferred_endpoint(node, endpoint_type))]
    if node.hostname:
        items.append((b"hostname", node.hostname))
    if node.flags & FAIL_FLAG:
        health = b"fail"
    elif node.is_replica and offset == 0:
        health = b"loading"
    else:
        health = b"online"
    items += [(b"role", b"replica" if node.is_replica else b"master"),
              (b"replication-offset", offset), (b"health", health)]
    return Map(items)


def shards_reply(topology: Topology, endpoint_type: str, my_offset: int,
                 tls_cluster: bool = False) -> list[Any]:
    """CLUSTER SHARDS (Redis 7.0's shape): per master, its slot ranges as a
    flat ``[first, last, ...]`` list and its nodes (the master, then its
    replicas), each a map.  Cost: O(16384 + nodes)."""
    ranges = slot_ranges_by_node(topology)
    reply: list[Any] = []
    for node in topology.nodes.values():
        if not node.is_master:
            continue
        slots = [bound for first, last in ranges.get(node, ()) for bound in (first, last)]
        nodes = [_shard_node(n, endpoint_type, my_offset, tls_cluster)
                 for n in (node, *node.replicas)]
        reply.append(Map([(b"slots", slots), (b"nodes", nodes)]))
    return reply


def _link_map(link: Link) -> Map:
    assert link.node is not None
    return Map([(b"direction", b"from" if link.inbound else b"to"),
                (b"node", link.node.name),
                (b"create-time", link.ctime),
                (b"events", link.events.encode()),
                (b"send-buffer-allocated", link.send_buffer_bytes),
                (b"send-buffer-used", link.send_buffer_bytes)])


def links_reply(topology: Topology) -> list[Any]:
    """CLUSTER LINKS: per node, the link we opened to it, then the one it
    opened to us, each a map.  Cost: O(nodes)."""
    reply: list[Any] = []
    for node in topology.nodes.values():
        for link in (node.link, node.inbound_link):
            if isinstance(link, Link) and link.node is not None:
                reply.append(_link_map(link))
    return reply


def _count(stats: Sequence[int] | Mapping[int, int], kind: int) -> int:
    if isinstance(stats, Mapping):
        return int(stats.get(kind, 0))
    return int(stats[kind]) if kind < len(stats) else 0


def info_text(topology: Topology, sent: Sequence[int] | Mapping[int, int],
              received: Sequence[int] | Mapping[int, int], links_limit_exceeded: int) -> str:
    """CLUSTER INFO, as 7.0.15 writes it: the state and slot counts, then
    the bus messages by type (only the types counted at least once), sent
    and received, and their totals.  ``sent``/``received`` are indexed by
    message type.  Cost: O(16384)."""
    assigned = ok = pfail = fail = 0
    for owner, first, last in owner_runs(topology):
        if owner is None:
            continue
        count = last - first + 1
        assigned += count
        if owner.flags & FAIL_FLAG:
            fail += count
        elif owner.flags & PFAIL:
            pfail += count
        else:
            ok += count
    my_epoch = topology.master_of(topology.myself).config_epoch
    lines = [
        f"cluster_state:{'ok' if topology.state_ok else 'fail'}",
        f"cluster_slots_assigned:{assigned}",
        f"cluster_slots_ok:{ok}",
        f"cluster_slots_pfail:{pfail}",
        f"cluster_slots_fail:{fail}",
        f"cluster_known_nodes:{len(topology.nodes)}",
        f"cluster_size:{topology.size}",
        f"cluster_current_epoch:{topology.current_epoch}",
        f"cluster_my_epoch:{my_epoch}",
    ]
    for direction, stats in (("sent", sent), ("received", received)):
        total = 0
        for kind, name in enumerate(TYPE_NAMES):
            count = _count(stats, kind)
            if count:
                total += count
                lines.append(f"cluster_stats_messages_{name}_{direction}:{count}")
        lines.append(f"cluster_stats_messages_{direction}:{total}")
    lines.append(f"total_cluster_links_buffer_limit_exceeded:{links_limit_exceeded}")
    return "".join(line + "\r\n" for line in lines)
