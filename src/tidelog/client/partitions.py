"""The partition streams of a topic: their names, their slots, and which one a
message key goes to.  Pure functions of their arguments (no client, no I/O).

A stream is one key, so one slot, so one primary and one core.  A *topic* of
``P`` partitions is ``P`` stream keys, ``<topic>:{<tag>}``, one consumer group
name shared by all of them, and producers that pick a partition by key hash,
as Kafka does.  Three choices fix the names:

**Names never depend on the topology.**  A partition's key is a function of the
topic, ``P`` and its index only, so a reshard, a failover or a new primary
renames nothing (the data and the consumer groups move with the slot; clients
follow ``MOVED``).  ``P`` is part of a topic's identity: a topic of 8 partitions
and one of 16 with the same name share no key but possibly the first, so to
change ``P``, start a new topic and drain the old one.

**Partition i sits in the i-th of P equal slot ranges.**  Plain ``{0}`` ...
``{P-1}`` tags land on slots at random (``orders:{0..7}`` are in slots 13907,
9842, 5649, 1584, 14039, 9974, 5781, 1716: on three primaries 16 such
partitions split 6/6/4).  Instead the range ``[round(i*16384/P),
round((i+1)*16384/P))`` is partition i's, rounding halves up, which is how
``redis-cli --cluster create`` (and ``tidelog-server --cluster-local``) split
the slots over ``N`` primaries; its tag is ``<i>.<n>`` with ``n`` the smallest
integer from 0 up whose tag's slot falls in that range.  So when the primaries
hold contiguous equal ranges, as those tools make them, ``P = k*N``
partitions put exactly ``k`` on each primary (the ranges of ``P`` nest in those
of ``N``), and other ``P`` spread as evenly as the ranges allow.  After a
rebalance that moved slots differently, :meth:`tidelog.client.topic.Topic.placement`
shows where each partition is; moving a partition is moving its one slot.
The tags do not depend on the topic's name: partition i of every topic of
``P`` partitions is in the same slot (so the same primary).  The cost is a
search: about ``P`` CRC16s per partition, ``P*P`` for a topic (1024
partitions: a few tenths of a second), done once per ``P`` per process.

**A message key picks its partition by CRC-32.**  ``partition_for(key, P) =
crc32(key) mod P``, CRC-32 as zlib's (IEEE 802.3, ``zlib.crc32``), over the key's
bytes (a ``str`` as UTF-8): any language reproduces it, unlike Python's
salted ``hash()``.  The same key always lands in the same partition while
``P`` stays, so its messages keep their order there.
"""

from __future__ import annotations

from binascii import crc32, crc_hqx
from dataclasses import dataclass
from functools import lru_cache

from tidelog.keyslot import SLOTS, key_slot

MAX_PARTITIONS = SLOTS
"""At most one partition per slot."""


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition stream of a topic."""

    index: int
    key: str
    slot: int


def _check_count(count: int) -> None:
    if not isinstance(count, int) or not 1 <= count <= MAX_PARTITIONS:
        raise ValueError(f"the number of partitions must be 1 to {MAX_PARTITIONS}, not {count!r}")


def _check_topic(topic: str) -> None:
    if not isinstance(topic, str) or not topic:
        raise ValueError(f"a topic is a non-empty str, not {topic!r}")
    if "{" in topic or "}" in topic:
        # The first {...} of a key is its hash tag: braces in the topic would
        # put every partition in one slot.
        raise ValueError(f"a topic name may not contain '{{' or '}}': {topic!r}")


def slot_range(index: int, count: int) -> range:
    """The slots of the ``index``-th of ``count`` equal ranges of the 16384,
    split as ``redis-cli --cluster create`` splits them over ``count``
    primaries. Cost: O(1)."""
    _check_count(count)
    if not 0 <= index < count:
        raise ValueError(f"partition {index} of {count} does not exist")
    return range(_bound(index, count), _bound(index + 1, count))


def _bound(index: int, count: int) -> int:
    # round(index * SLOTS / count), halves up, in integers.
    return (2 * index * SLOTS + count) // (2 * count)


@lru_cache(maxsize=64)
def partition_tags(count: int) -> tuple[str, ...]:
    """The hash tags of the ``count`` partitions of a topic, in index order:
    ``"<i>.<n>"``, ``n`` the smallest integer whose tag's slot is in
    ``slot_range(i, count)``. Cost: O(count^2) CRC16s the first time for a
    ``count``, then O(1) (cached)."""
    _check_count(count)
    tags = []
    for index in range(count):
        lo, hi = _bound(index, count), _bound(index + 1, count)
        prefix = crc_hqx(b"%d." % index, 0)
        n = 0
        # The CRC of "<i>.<n>" continued from the CRC of "<i>.": one short
        # CRC per candidate.  Every range holds a tag: the search ends.
        while not lo <= crc_hqx(b"%d" % n, prefix) & (SLOTS - 1) < hi:
            n += 1
        tags.append(f"{index}.{n}")
    return tuple(tags)


def partition_key(topic: str, index: int, count: int) -> str:
    """The stream key of partition ``index`` of a topic of ``count``
    partitions: ``"<topic>:{<i>.<n>}"``. Cost: that of :func:`partition_tags`."""
    _check_topic(topic)
    slot_range(index, count)  # checks index and count
    return f"{topic}:{{{partition_tags(count)[index]}}}"


def partitions(topic: str, count: int) -> list[Partition]:
    """Every partition of a topic: index, stream key and slot, in index order.
    Cost: that of :func:`partition_tags`, plus O(count)."""
    _check_topic(topic)
    out = []
    for index, tag in enumerate(partition_tags(count)):
        key = f"{topic}:{{{tag}}}"
        out.append(Partition(index, key, key_slot(key.encode())))
    return out


def partition_keys(topic: str, count: int) -> list[str]:
    """The stream keys of a topic's partitions, in index order."""
    return [p.key for p in partitions(topic, count)]


def partition_for(message_key: str | bytes, count: int) -> int:
    """The partition a message key goes to: ``crc32(key) mod count`` (zlib's
    CRC-32 of the key's bytes, a ``str`` as UTF-8). Cost: O(len(key))."""
    _check_count(count)
    if isinstance(message_key, str):
        message_key = message_key.encode()
    return crc32(message_key) % count
