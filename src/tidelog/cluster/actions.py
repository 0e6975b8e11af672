"""What the cluster state machine asks of its shell, and the bus links.

:class:`tidelog.cluster.state.ClusterState` does no I/O: each of its entry
points (a bus message, a link opened or closed, the 100 ms tick, a CLUSTER
command) appends actions to its ``outbox``; the shell in
:mod:`tidelog.server` takes them with ``drain()`` and carries them out in
order: it opens and closes sockets, writes encoded messages, writes and
fsyncs nodes.conf, points the replication at a new master, deletes the keys
of slots this node lost, delivers bus PUBLISH messages to local
subscribers, pauses writes for a manual failover.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import Message
from .nodes import Node


@dataclass(slots=True, eq=False)
class Link:
    """One bus connection, as the state machine sees it.

    ``inbound``: the peer connected to us (we reply on it, we do not ping
    on it); an outbound link is the one we opened to ``node`` (and is
    ``node.link``).  ``node`` of an inbound link is known once the peer's
    messages name a known sender.  ``peer_ip`` is the socket's peer address,
    used when the peer announces none.
    """

    inbound: bool
    ctime: int
    node: Node | None = None
    peer_ip: bytes = b""
    send_buffer_bytes: int = 0
    """Kept up to date by the shell, for CLUSTER LINKS."""
    receive_buffer_bytes: int = 0
    events: str = "r"
    """``r``, ``w`` or ``rw``, for CLUSTER LINKS."""
    local_ip: bytes = b""
    """This end's address on the socket (set by the shell): what a node
    without ``cluster-announce-ip`` learns as its own IP from a MEET."""


def outbound_link(node: Node) -> Link | None:
    """The link this node opened to ``node``, if any (Node keeps it untyped:
    nodes.py sits below this module). O(1)."""
    link = node.link
    return link if isinstance(link, Link) else None


@dataclass(slots=True)
class Connect:
    """Open an outbound link to ``node`` (``node.ip``:``node.cport``); then
    call ``on_link_connected`` with a new outbound :class:`Link`, or
    ``on_link_failed(node, now)`` when the connection cannot be made."""

    node: Node


@dataclass(slots=True)
class Send:
    """Write ``message`` on ``link``."""

    link: Link
    message: Message


@dataclass(slots=True)
class Close:
    """Close ``link`` (the shell then calls nothing more for it)."""

    link: Link


@dataclass(slots=True)
class SaveConfig:
    """Rewrite nodes.conf from the topology; fsync it when ``fsync``."""

    fsync: bool = False


@dataclass(slots=True)
class Replicate:
    """Replicate ``master`` (its ip and port) with PSYNC; ``None``: stop
    replicating and serve as a master (as REPLICAOF NO ONE)."""

    master: Node | None


@dataclass(slots=True)
class DeleteSlotKeys:
    """Delete every key of these slots (a slot this node lost while it
    still held keys)."""

    slots: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Deliver:
    """Deliver a PUBLISH (``shard``: SPUBLISH) that came over the bus to
    this node's subscribers."""

    channel: bytes
    message: bytes
    shard: bool = False


@dataclass(slots=True)
class PauseWrites:
    """Pause client writes until ``until`` ms (0: unpause), for a manual failover."""

    until: int


@dataclass(slots=True)
class Log:
    """A line for the server log, at ``level`` (``debug``, ``verbose``, ``notice``, ``warning``)."""

    level: str
    text: str


Action = Connect | Send | Close | SaveConfig | Replicate | DeleteSlotKeys | Deliver | PauseWrites | Log
