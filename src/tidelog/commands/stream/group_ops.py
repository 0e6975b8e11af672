"""Shared pieces of the consumer-group commands (:mod:`.xgroup`,
:mod:`.xreadgroup`, :mod:`.pel`, :mod:`.xinfo`): looking a group up, the
claim step XCLAIM, XAUTOCLAIM and XREADGROUP ... CLAIM share, and the
effect forms replicas and the AOF replay.

The XCLAIM effect form is idempotent: FORCE creates the record if missing,
TIME and RETRYCOUNT set the time and count outright, JUSTID keeps the count
as given, LASTID only ever moves the group forward, and an ID missing from
the stream only removes a record.

Consumer times follow Redis 7.2: ``seen-time`` is the last attempted read
or claim, ``active-time`` the last one that delivered or claimed something.
Consumers are created where 7.0 creates them (a read that serves the key, a
successful claim), not on every attempt as 7.2 does, so consumer lists stay
7.0's; an attempt by an existing consumer refreshes its ``seen-time``.
"""

from __future__ import annotations

from ...config import NOTIFY_STREAM
from ...ids import StreamID
from ...types.groups import Consumer, ConsumerGroup, PendingEntry
from ...types.stream import Stream
from ..args import INT64_MAX
from ..contract import Ctx


def group_of(stream: Stream | None, name: bytes) -> ConsumerGroup | None:
    """The stream's group ``name``, if both exist."""
    return None if stream is None else stream.groups.get(name)


def xclaim_effect(key: bytes, group: ConsumerGroup, id_arg: bytes,
                  entry: PendingEntry) -> list[bytes]:
    """The XCLAIM that recreates ``entry`` exactly on a replica (Redis's
    streamPropagateXCLAIM form, 14 arguments)."""
    owner = entry.consumer.name if entry.consumer is not None else b""
    return [b"XCLAIM", key, group.name, owner, b"0", id_arg,
            b"TIME", b"%d" % entry.delivery_time,
            b"RETRYCOUNT", b"%d" % entry.delivery_count,
            b"FORCE", b"JUSTID", b"LASTID", bytes(group.last_id)]


def gone_effect(key: bytes, group: ConsumerGroup, id_arg: bytes,
                entry: PendingEntry) -> list[bytes]:
    """What tells a replica to drop a pending entry whose stream entry is
    gone: the XCLAIM of its record (a replica drops it, finding no entry),
    or for an unowned (XNACKed) record, which has no consumer to name, an
    XACK (Redis 8.8 does the same)."""
    if entry.consumer is None:
        return [b"XACK", key, group.name, id_arg]
    return xclaim_effect(key, group, id_arg, entry)


def setid_effect(key: bytes, group: ConsumerGroup) -> list[bytes]:
    """The group's position, for replicas: ``XGROUP SETID ... ENTRIESREAD``."""
    return [b"XGROUP", b"SETID", key, group.name, bytes(group.last_id),
            b"ENTRIESREAD", b"%d" % group.entries_read]


def one_more(count: int) -> int:
    """A delivery count plus one, stopping at LLONG_MAX: XNACK FATAL sets that
    value, and a count above it could not be propagated (RESP integers are
    signed 64-bit)."""
    return count + 1 if count < INT64_MAX else INT64_MAX


def drop_references(stream: Stream, id: StreamID) -> int:
    """Remove ``id`` from every group's PEL (DELREF); returns how many held it."""
    return sum(1 for group in stream.groups.values() if group.ack(id))


def claiming_consumer(group: ConsumerGroup, name: bytes, now: int) -> Consumer | None:
    """The consumer XCLAIM/XAUTOCLAIM claims for, seen now, if it exists.

    Redis 7.0 creates it only when something is claimed (see
    :func:`new_consumer`); 7.2 creates it up front.  We keep 7.0's consumer
    list and 7.2's meaning of ``seen-time``."""
    consumer = group.consumer(name)
    if consumer is not None:
        consumer.seen_time = now
    return consumer


def new_consumer(ctx: Ctx, group: ConsumerGroup, name: bytes, now: int) -> Consumer:
    """Create the claiming consumer, now that it claims something."""
    consumer, _ = group.create_consumer(name, now)
    ctx.changed(key=ctx.argv[1])
    ctx.notify(NOTIFY_STREAM, b"xgroup-createconsumer", ctx.argv[1])  # XCLAIM's, XAUTOCLAIM's key
    return consumer


def drop_gone(ctx: Ctx, key: bytes, group: ConsumerGroup, id_arg: bytes,
              entry: PendingEntry) -> None:
    """A pending entry whose stream entry is gone: drop it from the PEL, and
    tell replicas (:func:`gone_effect`)."""
    ctx.effect(gone_effect(key, group, id_arg, entry))
    group.ack(entry.id)
    ctx.changed(key=key)


def claim(ctx: Ctx, key: bytes, group: ConsumerGroup, consumer: Consumer, id: StreamID,
          id_arg: bytes, delivery_time: int, count: int, now: int) -> PendingEntry:
    """Give pending entry ``id`` to ``consumer`` with this delivery time and
    count (the consumer is active now), and propagate its XCLAIM form."""
    entry = group.claim(id, consumer, delivery_time, count)
    consumer.active_time = now
    ctx.effect(xclaim_effect(key, group, id_arg, entry))
    ctx.changed(key=key)
    return entry
