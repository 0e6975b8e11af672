"""One logical stream spread over the primaries of a cluster: a *topic* of
``P`` partition streams (:mod:`.partitions` names them), produced to by key
hash and consumed by one consumer group across all of them, on redis-py's
``RedisCluster`` (a plain ``redis.Redis`` works too: every command names one
key).  ``pip install "tidelog[client]"`` brings redis-py.

Producing: :meth:`Topic.produce` sends a message with a key to partition
``crc32(key) mod P`` (so one key's messages keep their order), one without a
key round robin; :meth:`Topic.produce_many` pipelines a batch, one round trip
per primary.  ``maxlen`` caps each partition with ``XADD ... MAXLEN ~`` (or
``=``).  Delivery to the server is at least once, as with redis-py's own
retries: when a primary's connection drops in the middle of a batch, the
messages sent on it go again through the cluster client, and those the
primary had appended before it went away are then there twice.

Consuming: :meth:`Topic.create_group` creates the group on every partition
(``XGROUP CREATE ... MKSTREAM``, an existing group is left as it is).  A
:class:`Consumer` is one member of the group; several of them, in any number of
processes, share the messages: each message goes to one of them.
:meth:`Consumer.read` reads new messages from every partition it is given (all
by default): first one pass without blocking, ``XREADGROUP ... >`` per
partition, pipelined per primary (a cluster cannot serve one ``XREADGROUP`` over
keys of several slots); only when that pass found nothing does it block, for
``block_ms`` at most, on one partition, a different one each time, so a quiet
partition never holds up a busy one for longer than that.  A partition whose
slot moved (``MOVED``, ``ASK``, ``TRYAGAIN``) or whose primary is unreachable is
read again through ``RedisCluster`` itself, which follows the redirection and
refreshes its slot map, so resharding and failovers are transparent.  A read
returns what the partitions that answered delivered even when others failed
(their errors are in ``Consumer.errors``; a read that got nothing raises the
first), so a primary that is down, until its replica takes over, holds up
only its own partitions and loses no delivered message.  (The
per-primary pipelines are plain ones on the connections ``RedisCluster``
keeps for its nodes: its own cluster pipeline would ask a node for the keys
of each ``XREADGROUP`` first, ``COMMAND GETKEYS``, a round trip each, and costs
more in Python per command.)
:meth:`Consumer.ack` acknowledges (``XACK``, pipelined), and
:meth:`Consumer.claim` takes over messages another consumer read and has not
acknowledged for ``min_idle_ms`` (``XAUTOCLAIM``, a cursor per partition): the
way to recover the work of a consumer that died.

Order: one partition's messages are read in ID order, so in production order
per key.  When several consumers read one partition, they may process one
key's messages at the same time; to keep processing order per key, give each
consumer its own partitions (``partitions=``: e.g. consumer ``c`` of ``C``
takes the indexes ``i`` with ``i % C == c``).

Replies are handled in every shape redis-py gives (RESP2 or RESP3,
``decode_responses`` on or off): entry IDs and field names come back as the
client returns them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import redis

from .partitions import Partition, partition_for, partitions

REDIRECTIONS = (redis.exceptions.MovedError, redis.exceptions.AskError,
                redis.exceptions.TryAgainError, redis.exceptions.ClusterDownError)
"""Replies after which a partition is read again through the cluster client."""


class Message(NamedTuple):
    """One entry of a partition, as read by a consumer."""

    partition: int
    stream: str
    id: Any  # str or bytes, as the client decodes
    fields: dict[Any, Any]


class TopicBase:
    """What :class:`Topic` and :class:`~tidelog.client.aio.AsyncTopic` share:
    the partitions, the routing of message keys, no I/O but :meth:`placement`
    (the client's slot map, in memory)."""

    def __init__(self, client: Any, name: str, count: int, *, maxlen: int | None = None,
                 approximate: bool = True) -> None:
        self.client = client
        self.name = name
        self.partitions: list[Partition] = partitions(name, count)
        self.keys = [p.key for p in self.partitions]
        self.maxlen = maxlen
        self.approximate = approximate
        self._index: dict[str | bytes, int] = {}
        for p in self.partitions:
            self._index[p.key] = self._index[p.key.encode()] = p.index
        self._next = random.randrange(count)
        # Commands sent again through the cluster client (redirected, or their
        # node unreachable): they happen while slots move and after a failover.
        self.rerouted = 0

    @property
    def count(self) -> int:
        return len(self.partitions)

    def partition_for(self, key: str | bytes | None) -> int:
        """The partition of a message key; round robin when ``key`` is None."""
        if key is None:
            self._next = (self._next + 1) % self.count
            return self._next
        return partition_for(key, self.count)

    def index_of(self, stream: str | bytes) -> int:
        """The partition index of a partition stream key."""
        return self._index[stream]

    def _xadd_args(self, maxlen: int | None, approximate: bool | None) -> dict[str, Any]:
        maxlen = self.maxlen if maxlen is None else maxlen
        approximate = self.approximate if approximate is None else approximate
        return {"maxlen": maxlen, "approximate": approximate} if maxlen is not None else {}

    def _queue_xadds(self, pipe: Any, messages: Iterable[tuple[str | bytes | None, Mapping[Any, Any]]],
                     maxlen: int | None, approximate: bool | None) -> list[str]:
        extra = self._xadd_args(maxlen, approximate)
        streams = []
        for key, fields in messages:
            stream = self.keys[self.partition_for(key)]
            streams.append(stream)
            pipe.xadd(stream, dict(fields), **extra)
        return streams

    @staticmethod
    def _created(replies: Iterable[Any]) -> int:
        created = 0
        for reply in replies:
            if isinstance(reply, redis.ResponseError):
                if not str(reply).startswith("BUSYGROUP"):
                    raise reply
            else:
                created += 1
        return created

    def placement(self) -> dict[str, list[int]]:
        """Which node serves which partitions, as the client's slot map has it:
        ``{"host:port": [partition indexes]}``."""
        out: dict[str, list[int]] = defaultdict(list)
        for p in self.partitions:
            out[_node_name(self.client, p.key)].append(p.index)
        return dict(out)


class Topic(TopicBase):
    """``count`` partition streams named after ``name`` on ``client`` (a
    ``RedisCluster`` or a ``Redis``)."""


    def produce(self, key: str | bytes | None, fields: Mapping[Any, Any], *,
                maxlen: int | None = None, approximate: bool | None = None) -> tuple[str, Any]:
        """XADD ``fields`` to the partition of ``key``: (partition key, entry ID).
        One round trip; O(1) on the server (plus the trim)."""
        stream = self.keys[self.partition_for(key)]
        return stream, self.client.xadd(stream, dict(fields), **self._xadd_args(maxlen, approximate))

    def produce_many(self, messages: Iterable[tuple[str | bytes | None, Mapping[Any, Any]]], *,
                     maxlen: int | None = None,
                     approximate: bool | None = None) -> list[tuple[str, Any]]:
        """XADD each (key, fields) to its partition, in one pipeline (a round
        trip per primary); the (partition key, entry ID) of each, in order.
        Messages of one key are appended in the order given.  When some could
        not be appended, the first error is raised after the rest were sent:
        an error reply fails its own message only; of the messages sent again
        (redirected, or their primary unreachable), a partition's are not sent
        after its first that failed (no primary for the slot yet)."""
        extra = self._xadd_args(maxlen, approximate)
        batch = [(self.keys[self.partition_for(key)], dict(fields)) for key, fields in messages]
        streams = [stream for stream, _ in batch]

        def queue(pipe: Any, pos: int) -> None:
            pipe.xadd(*batch[pos], **extra)

        def resend(pos: int) -> Any:
            return self.client.xadd(*batch[pos], **extra)

        ids, errors, rerouted = _per_node(self.client, streams, queue, resend)
        self.rerouted += rerouted
        if errors:
            raise errors[min(errors)]
        return list(zip(streams, ids))

    def create_group(self, group: str, id: str = "$") -> int:
        """XGROUP CREATE ``group`` at ``id`` with MKSTREAM on every partition;
        a partition where the group exists already keeps it (BUSYGROUP is not
        an error).  The number of groups created.  One pipeline."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xgroup_create(key, group, id=id, mkstream=True)
        return self._created(pipe.execute(raise_on_error=False))

    def consumer(self, group: str, name: str, *, partitions: Iterable[int] | None = None,
                 block_ms: int = 100, count: int = 100) -> Consumer:
        """A member ``name`` of ``group`` reading ``partitions`` (every one by default)."""
        return Consumer(self, group, name, partitions=partitions, block_ms=block_ms, count=count)

    def lengths(self) -> list[int]:
        """XLEN of every partition, in index order (one pipeline)."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xlen(key)
        return list(pipe.execute())


class ConsumerBase:
    """What :class:`Consumer` and :class:`~tidelog.client.aio.AsyncConsumer`
    share: the partitions read, the cursors, the parsing of replies."""

    def __init__(self, topic: TopicBase, group: str, name: str, *,
                 partitions: Iterable[int] | None = None, block_ms: int = 100,
                 count: int = 100) -> None:
        self.topic = topic
        self.client = topic.client
        self.group = group
        self.name = name
        indexes = range(topic.count) if partitions is None else sorted(set(partitions))
        for i in indexes:
            if not 0 <= i < topic.count:
                raise ValueError(f"topic {topic.name!r} has no partition {i}")
        self.keys = [topic.keys[i] for i in indexes]
        if not self.keys:
            raise ValueError("a consumer needs at least one partition")
        self.block_ms = block_ms
        self.count = count
        self._turn = 0  # the partition the next blocking read waits on
        self._cursors = dict.fromkeys(self.keys, "0-0")  # XAUTOCLAIM's, per partition
        # Partition reads sent again through the cluster client (redirected or
        # unreachable): they happen while slots move and after a failover.
        self.rerouted = 0
        # The partitions the last read could not read, with the error: a read
        # that got messages returns them (the server delivered them) and
        # leaves the failures here; one that got none raises the first.
        self.errors: dict[str, BaseException] = {}

    def _messages(self, reply: Any) -> list[Message]:
        out: list[Message] = []
        for stream, entries in _stream_replies(reply):
            index = self.topic.index_of(stream)
            key = self.topic.keys[index]
            out.extend(Message(index, key, entry_id, fields) for entry_id, fields in entries
                       if entry_id is not None)
        return out

    def _next_turn(self) -> str:
        key = self.keys[self._turn % len(self.keys)]
        self._turn += 1
        return key

    def _ack_ids(self, messages: Iterable[Message]) -> dict[str, list[Any]]:
        ids: dict[str, list[Any]] = defaultdict(list)
        for m in messages:
            ids[m.stream].append(m.id)
        return ids

    def _claimed(self, replies: Iterable[Any]) -> list[Message]:
        out: list[Message] = []
        for key, reply in zip(self.keys, replies):
            cursor, entries = reply[0], reply[1]
            self._cursors[key] = cursor
            index = self.topic.index_of(key)
            out.extend(Message(index, key, entry_id, fields) for entry_id, fields in entries
                       if entry_id is not None)
        return out


class Consumer(ConsumerBase):
    """One consumer of a group over some or all partitions of a topic."""

    def read(self, count: int | None = None, block_ms: int | None = None) -> list[Message]:
        """New messages for this consumer: up to ``count`` per partition from a
        pass over every partition without blocking; if that found none, one
        ``XREADGROUP ... BLOCK block_ms`` on the next partition in turn (0: do
        not block).  Round trips: one per primary, plus the blocking one."""
        count = self.count if count is None else count
        block_ms = self.block_ms if block_ms is None else block_ms
        found = self._pass(count)
        if found or block_ms <= 0:
            return found
        return self._messages(self._xreadgroup(self._next_turn(), count, block_ms))

    def _xreadgroup(self, key: str, count: int, block_ms: int | None = None) -> Any:
        """XREADGROUP of one partition through the client, sent to the node its
        slot map names for the key (RedisCluster follows MOVED and ASK from
        there, and refreshes the map when that node is unreachable).
        ``client.xreadgroup`` would first ask the client's default node for the
        command's keys (COMMAND GETKEYS): a round trip more, and no read at all
        while that node is down."""
        args: list[Any] = ["XREADGROUP", "GROUP", self.group, self.name, "COUNT", count]
        if block_ms is not None:
            args += ["BLOCK", block_ms]
        args += ["STREAMS", key, ">"]
        if hasattr(self.client, "get_node_from_key"):
            return self.client.execute_command(*args, target_nodes=self.client.get_node_from_key(key))
        return self.client.execute_command(*args)

    def _pass(self, count: int) -> list[Message]:
        def queue(pipe: Any, pos: int) -> None:
            pipe.xreadgroup(self.group, self.name, {self.keys[pos]: ">"}, count=count)

        def resend(pos: int) -> Any:
            return self._xreadgroup(self.keys[pos], count)

        replies, errors, rerouted = _per_node(self.client, self.keys, queue, resend)
        self.rerouted += rerouted
        self.errors = {self.keys[pos]: e for pos, e in errors.items()}
        found = [m for reply in replies for m in self._messages(reply)]
        if errors and not found:
            raise errors[min(errors)]
        return found

    def ack(self, messages: Iterable[Message]) -> int:
        """XACK the messages, per partition in one pipeline; how many were pending."""
        ids = self._ack_ids(messages)
        if not ids:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for key, entry_ids in ids.items():
            pipe.xack(key, self.group, *entry_ids)
        return sum(pipe.execute())

    def claim(self, min_idle_ms: int, count: int = 100) -> list[Message]:
        """Messages of this consumer's partitions that their consumer has not
        acknowledged for ``min_idle_ms``, now this consumer's: ``XAUTOCLAIM``
        of up to ``count`` per partition, each continuing where the last call
        stopped (from the start again after the end).  Entries deleted from
        the stream meanwhile leave the group's pending list (Redis 7)."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xautoclaim(key, self.group, self.name, min_idle_ms,
                            start_id=self._cursors[key], count=count)
        return self._claimed(pipe.execute())

    def pending(self) -> int:
        """How many messages of this consumer's partitions the group has
        delivered and not had acknowledged (XPENDING summary, pipelined)."""
        pipe = self.client.pipeline(transaction=False)
        for key in self.keys:
            pipe.xpending(key, self.group)
        return sum(reply["pending"] for reply in pipe.execute())


def _node_name(client: Any, key: str) -> str:
    if hasattr(client, "get_node_from_key"):
        return str(client.get_node_from_key(key).name)
    kw = client.connection_pool.connection_kwargs
    return f"{kw.get('host', 'localhost')}:{kw.get('port', 6379)}"


def _by_node(client: Any, keys: Sequence[str]) -> list[tuple[Any, list[int]]]:
    """The positions of ``keys`` grouped by the node serving each key (the
    client's slot map), each group with a plain client of its node."""
    if not hasattr(client, "get_node_from_key"):
        return [(client, list(range(len(keys))))]
    groups: dict[str, tuple[Any, list[int]]] = {}
    for pos, key in enumerate(keys):
        node = client.get_node_from_key(key)
        if node.name not in groups:
            groups[node.name] = (client.get_redis_connection(node), [])
        groups[node.name][1].append(pos)
    return list(groups.values())


def _per_node(client: Any, keys: Sequence[str], queue: Callable[[Any, int], None],
              resend: Callable[[int], Any]) -> tuple[list[Any], dict[int, Exception], int]:
    """One command per key (``queue(pipe, position)`` queues it), in one
    pipeline per node: a round trip per node, without the cluster pipeline's
    work per command.  A command answered by a redirection (the slot moved or
    is moving) or whose node could not be reached is sent again, in order,
    with ``resend(position)`` through the cluster client, which follows
    ``MOVED``/``ASK`` and refreshes its slot map; once one of a key's commands
    failed there, that key's later ones are not sent (they would overtake it).
    Returns the replies in order (None where failed), the error of each
    position that failed, and how many were sent again."""
    replies: list[Any] = [None] * len(keys)
    errors: dict[int, Exception] = {}
    again: list[int] = []
    for conn, positions in _by_node(client, keys):
        pipe = conn.pipeline(transaction=False)
        for pos in positions:
            queue(pipe, pos)
        try:
            got = pipe.execute(raise_on_error=False)
        except (redis.ConnectionError, redis.TimeoutError):
            again.extend(positions)
            continue
        for pos, reply in zip(positions, got):
            if isinstance(reply, REDIRECTIONS):
                again.append(pos)
            elif isinstance(reply, Exception):
                errors[pos] = reply
            else:
                replies[pos] = reply
    again.sort()
    failed: dict[str, Exception] = {}
    for pos in again:
        if keys[pos] in failed:
            errors[pos] = failed[keys[pos]]
            continue
        try:
            replies[pos] = resend(pos)
        except redis.RedisError as e:  # no primary for the slot yet, the node down ...
            errors[pos] = failed[keys[pos]] = e
    return replies, errors, len(again)


def _stream_replies(reply: Any) -> list[tuple[Any, list[Any]]]:
    """(stream, [(id, fields), ...]) pairs of an XREAD/XREADGROUP reply in any
    of redis-py's shapes: a list of [stream, entries] (RESP2), a dict of stream
    to entries, or to a one-element list of them (RESP3)."""
    if not reply:
        return []
    pairs = reply.items() if isinstance(reply, dict) else ((r[0], r[1]) for r in reply)
    out: list[tuple[Any, list[Any]]] = []
    for stream, entries in pairs:
        if (entries and isinstance(entries[0], list)
                and (not entries[0] or not isinstance(entries[0][0], (str, bytes)))):
            entries = entries[0]
        out.append((stream, entries or []))
    return out
