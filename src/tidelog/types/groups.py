"""Consumer groups: the pending entries list (PEL), consumers, and Redis 7 lag.

A consumer group remembers how far it has read a stream (``last_id``, and
``entries_read``, the logical offset of that entry among all entries ever
added) and which delivered entries are not acknowledged yet.  Every pending
entry is one :class:`PendingEntry` record, shared by the group's PEL and by
the PEL of the consumer that owns it; a third structure orders the records by
delivery time, for "longest idle first" scans::

    ConsumerGroup  name, last_id, entries_read
      pel        SortedIndex, ID order      1-0 -> A    2-0 -> B    3-0 -> C
      consumers  SortedDict, name order     b"alice" -> Consumer alice
                                            b"bob"   -> Consumer bob
      _by_time   SortedKeys, oldest first   (500, 1-0)  (650, 3-0)  (700, 2-0)

    Consumer alice   pel: SortedIndex 1-0 -> A, 3-0 -> C    (the same objects
    Consumer bob     pel: SortedIndex 2-0 -> B               as the group's pel)

    PendingEntry A   id 1-0, delivery_time 500, delivery_count 1, consumer alice
    PendingEntry B   id 2-0, delivery_time 700, delivery_count 3, consumer bob
    PendingEntry C   id 3-0, delivery_time 650, delivery_count 1, consumer alice

    An unowned record (consumer None; XNACK, Redis 8.8) is in the group's
    pel and _by_time, and in the NACK zone: ``_nacked`` (a SortedDict,
    sequence number -> ID, in the order the entries were released) and
    ``_nack_seq`` (ID -> its sequence number).  Claiming commands take the
    NACK zone first, oldest release first (:meth:`ConsumerGroup.claimable`).

:class:`~tidelog.types.sorted_index.SortedIndex` is a dict (the records) plus
a sorted list of its keys; :class:`~tidelog.types.sorted_index.SortedKeys` is
such a sorted list alone.  Both are built for the queue-like traffic of a
group (see that module): XREADGROUP appends IDs in increasing order at
non-decreasing times, and XACK removes them mostly from the front, so both
are O(1) amortised; removals elsewhere only mark the key dead until the list
is compacted.  An insert that would land far back in the list (more than
``FLAT_INSERT_MAX``, 1024, positions before its end) converts that one
index, once and for good, to a sortedcontainers SortedDict or SortedList.

The time index holds ``(delivery_time, id)`` pairs rather than records, so a
record is always reached through ``pel``.  Every change of a record's
``delivery_time`` or owner goes through a method of the group, which keeps
all three structures in step; assign ``delivery_time`` or ``consumer``
directly and :meth:`ConsumerGroup.check` fails.  ``delivery_count`` is not
indexed and commands may set it (XNACK's modes do).

Cost model: N pending entries in the group, P in one consumer, C consumers,
k records taken from an iterator.  Lookups by ID are dict lookups, O(1).
In the sorted indexes, a key above every other one (a new delivery, at the
current time) is appended, O(1), and any removal is O(1) amortised (the
time index needs an O(log N) search for a pair that is neither its first
nor its last).  Any other insert - an ID below the consumer's or group's
largest (XCLAIM, XGROUP SETID back), a time below the newest (XCLAIM IDLE
or TIME, XNACK's time 0) - is a binary search plus a C ``memmove`` of the
keys after it when it lands at most ``FLAT_INSERT_MAX`` positions before
the end of the list, so O(log N) plus under a microsecond.  One landing
further back converts that index to sortedcontainers, O(N) once (at
100,000 entries about 10 ms for the time index, 25 ms for a PEL,
in-process); from then on every update of that index is O(log N), as
sortedcontainers is (about 0.5 us of Python).  So the worst case is
bounded by O(log N) per update, and a group that only reads new entries
and acks them keeps the O(1) flat path.  A ``>`` read's batch and the XACK
of one batch also go through in bulk (:meth:`ConsumerGroup.deliver_new`,
:meth:`ConsumerGroup.ack_all`): one C-level append or slice step per index
for the whole batch, falling back to the per-ID methods for any other shape.  Range and idle scans are
lazy, O(log N + k), plus, while flat, the removed keys not yet compacted
that they pass over (never more than the live ones).  Scans tolerate
changes to the group between the records they yield (XAUTOCLAIM acks or
claims while scanning), a conversion included: they fetch keys in small
batches, re-seek by key after each batch, and skip keys whose record has
gone or moved.

Invariants that :meth:`ConsumerGroup.check` asserts:

1. ``pel`` maps each ID to a record with that ``id``; ``delivery_count >= 0``.
2. An owned record's consumer is the group's consumer of that name, and that
   consumer's ``pel`` maps the ID to the *same* record.
3. Every consumer is stored under its own name, and each record in its
   ``pel`` is the group's record for that ID and names it as owner.  So each
   pending ID has exactly one owner or none, and the consumer PELs partition
   the owned part of the group PEL.
4. ``_by_time`` equals ``{(e.delivery_time, e.id) for e in pel}``.
5. ``entries_read >= -1`` (-1: unknown); ``last_id`` is a :class:`StreamID`.
6. The sorted indexes and containers pass their own ``_check()``.
7. The NACK zone holds exactly the unowned records: ``_nack_seq`` maps each
   unowned ID to a key of ``_nacked`` that maps back to it, and nothing else.

What is *not* an invariant: "no pending ID above ``last_id``".  XGROUP SETID
may move ``last_id`` back below entries already delivered, and XCLAIM FORCE
(and the XCLAIM form that XREADGROUP propagates) may create a record for any
ID; Redis allows both.

Lag and entries-read follow Redis 8's rules (see :meth:`ConsumerGroup.lag`,
:meth:`ConsumerGroup.advance` and :func:`estimate_entries_read`): 7.0's, with
the fixes that make every number reported true (nil where it cannot be
known).  Nothing here reads a clock: times come in as ``now_ms``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice, repeat
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedDict

from tidelog.ids import MAX_ID, MIN_ID, StreamID
from tidelog.types.sorted_index import SortedIndex, SortedKeys

if TYPE_CHECKING:
    from tidelog.types.stream import Stream

UNKNOWN = -1  # entries_read / estimate: not known (Redis's SCG_INVALID_ENTRIES_READ)

# Lazy scans fetch this many keys first, doubling up to the maximum per re-seek.
_FIRST_BATCH = 16
_MAX_BATCH = 1024


class PendingEntry:
    """One delivered, unacknowledged entry of a group (Redis's ``streamNACK``).

    ``consumer`` is the owning :class:`Consumer`, or None for an unowned
    entry (XNACK, Redis 8.8).  ``delivery_time`` is in ms since the epoch.
    ``delivery_time`` and ``consumer`` are indexed by the group: change
    them through its methods only.  ``delivery_count`` is free to set.
    """

    __slots__ = ("id", "delivery_time", "delivery_count", "consumer")

    def __init__(
        self, id: StreamID, delivery_time: int, delivery_count: int, consumer: Consumer | None
    ) -> None:
        self.id = id
        self.delivery_time = delivery_time
        self.delivery_count = delivery_count
        self.consumer = consumer

    def __repr__(self) -> str:
        owner = None if self.consumer is None else self.consumer.name
        return (
            f"<PendingEntry {self.id} owner={owner!r} "
            f"time={self.delivery_time} count={self.delivery_count}>"
        )


class Consumer:
    """A named consumer of a group, and the pending entries it owns.

    ``seen_time`` is the last attempted interaction (XINFO CONSUMERS
    ``idle``), ``active_time`` the last successful read or claim
    (``inactive``; -1 if never).  ``pel`` holds the same
    :class:`PendingEntry` objects as the group's PEL.
    """

    __slots__ = ("name", "seen_time", "active_time", "pel")

    def __init__(self, name: bytes, seen_time: int, active_time: int = -1) -> None:
        self.name = name
        self.seen_time = seen_time
        self.active_time = active_time
        self.pel = SortedIndex()  # StreamID -> PendingEntry

    def __repr__(self) -> str:
        return f"<Consumer {self.name!r} pending={len(self.pel)}>"


class ConsumerGroup:
    """A consumer group of one stream: last delivered ID, PEL, consumers.

    ``consumers`` iterates in name order (byte order, as Redis's radix tree
    does), which XINFO CONSUMERS and XPENDING's summary show.
    """

    __slots__ = ("name", "last_id", "entries_read", "pel", "consumers", "_by_time",
                 "_nacked", "_nack_seq", "_nack_next")

    def __init__(self, name: bytes, last_id: StreamID, entries_read: int = UNKNOWN) -> None:
        self.name = name
        self.last_id = last_id
        self.entries_read = entries_read
        self.pel = SortedIndex()  # StreamID -> PendingEntry
        self.consumers: SortedDict = SortedDict()  # bytes -> Consumer
        self._by_time = SortedKeys()  # (delivery_time, StreamID)
        # The NACK zone (XNACK, Redis 8.8): unowned records in release order.
        self._nacked: SortedDict = SortedDict()  # sequence number -> StreamID
        self._nack_seq: dict[StreamID, int] = {}  # StreamID -> sequence number
        self._nack_next = 0

    def __repr__(self) -> str:
        return (
            f"<ConsumerGroup {self.name!r} last_id={self.last_id} "
            f"entries_read={self.entries_read} pending={len(self.pel)} "
            f"consumers={len(self.consumers)}>"
        )

    # -- consumers ------------------------------------------------------------

    def consumer(self, name: bytes) -> Consumer | None:
        """The consumer called ``name``, or None.  Cost: O(1)."""
        return self.consumers.get(name)

    def create_consumer(self, name: bytes, now_ms: int) -> tuple[Consumer, bool]:
        """The consumer called ``name``, created if missing: ``(consumer, created)``.

        A new consumer has ``seen_time = now_ms`` and ``active_time = -1``;
        an existing one is returned unchanged (XGROUP CREATECONSUMER then
        replies 0; XREADGROUP updates ``seen_time`` itself).

        Cost: O(1) when it exists, O(log C) to create.
        """
        found = self.consumers.get(name)
        if found is not None:
            return found, False
        created = Consumer(name, now_ms)
        self.consumers[name] = created
        return created, True

    def delete_consumer(self, name: bytes) -> int:
        """Remove a consumer and its pending entries (XGROUP DELCONSUMER).

        Its entries leave the group PEL too: they are neither acknowledged
        nor pending any more, as in Redis.  Returns how many it had pending,
        0 when there is no such consumer.

        Cost: O(P log N) for P entries it had, plus O(log C).
        """
        gone = self.consumers.pop(name, None)
        if gone is None:
            return 0
        by_time = self._by_time
        pel = self.pel
        for id, entry in gone.pel.items():
            del pel[id]
            by_time.remove((entry.delivery_time, id))
            entry.consumer = None
        count = len(gone.pel)
        gone.pel.clear()
        return count

    # -- the pending entries list -----------------------------------------

    def pending(self, id: StreamID) -> PendingEntry | None:
        """The pending entry ``id``, or None.  Cost: O(1)."""
        return self.pel.get(id)

    def deliver(self, id: StreamID, consumer: Consumer, now_ms: int) -> PendingEntry:
        """Record that an XREADGROUP ``>`` read delivered entry ``id`` to ``consumer``.

        A new pending entry gets ``delivery_count`` 1 and ``delivery_time``
        ``now_ms``.  If ``id`` is already pending (XGROUP SETID moved
        ``last_id`` back over delivered entries), the same record moves to
        ``consumer`` (from its old owner, or from no owner) with its count
        reset to 1 and its time set to ``now_ms``; redelivery to the same
        consumer resets it the same way.  This is Redis 7's behaviour,
        checked on redis-server 7.0.15 with XPENDING after SETID.

        Also sets ``consumer.active_time = now_ms``, as Redis 7.2 does for
        every entry a ``>`` read adds to the PEL (a NOACK read calls neither
        this nor, in Redis, touches ``active_time``).  Does not move
        ``last_id``: see :meth:`advance`.

        Cost: O(1) amortised for an ID above every pending one (a ``>`` read);
        a redelivery is O(log N), plus a bounded memmove or a one-time
        conversion of an index if its ID is below the new owner's largest
        (see the cost model in the module docstring).
        """
        self._own(consumer)
        entry = self.pel.get(id)
        if entry is None:
            entry = PendingEntry(id, now_ms, 1, consumer)
            self.pel[id] = entry
            consumer.pel[id] = entry
        else:
            self._by_time.remove((entry.delivery_time, id))
            if entry.consumer is None:
                self._unnack(id)
            self._move(entry, consumer)
            entry.delivery_time = now_ms
            entry.delivery_count = 1
        self._by_time.add((now_ms, id))
        consumer.active_time = now_ms
        return entry

    def deliver_new(self, ids: list[StreamID], consumer: Consumer, now_ms: int) -> None:
        """:meth:`deliver` for each of ``ids`` in turn: one ``>`` read's batch.

        ``ids`` must be strictly increasing (entries read forwards from the
        stream).  When the first is above every pending ID, which is the
        case unless XGROUP SETID moved ``last_id`` back, every record is new
        and goes in with one bulk append per index (:meth:`SortedIndex.extend`);
        otherwise each ID takes :meth:`deliver`'s path.

        Cost: O(k) for k IDs in the first case (the indexes' part in C, one
        record made per ID), O(1) amortised per ID when the delivery time is
        not below the newest pending one; else as :meth:`deliver` per ID.
        """
        if not ids:
            return
        pel = self.pel
        if pel and pel.peekitem(-1)[0] >= ids[0]:
            for id in ids:
                self.deliver(id, consumer, now_ms)
            return
        self._own(consumer)
        entries = list(map(PendingEntry, ids, repeat(now_ms), repeat(1), repeat(consumer)))
        pel.extend(ids, entries)
        consumer.pel.extend(ids, entries)
        self._by_time.extend([(now_ms, id) for id in ids])
        consumer.active_time = now_ms

    def ack(self, id: StreamID) -> bool:
        """Remove ``id`` from the group PEL and its owner's (XACK); False if not pending.

        Cost: O(1) amortised; O(log N) when its delivery time is neither the
        oldest nor the newest.
        """
        entry = self.pel.pop(id, None)
        if entry is None:
            return False
        self._forget(entry)
        return True

    def ack_all(self, ids: list[StreamID]) -> int:
        """:meth:`ack` for each of ``ids`` in turn (XACK); how many were pending.

        When ``ids`` are consecutive pending IDs in order, all owned by one
        consumer (the XACK of one delivered batch), each index takes them out
        in bulk (:meth:`SortedIndex.pop_run`, :meth:`SortedKeys.remove_run`);
        an index where they are not consecutive, and any other list of IDs
        (missing, repeated, unordered, unowned), takes the per-ID path.

        Cost: O(log N + k) for k IDs in the bulk case, the indexes' part in C;
        otherwise as :meth:`ack` per ID.
        """
        entries = self.pel.pop_run(ids) if len(ids) > 1 else None
        if entries is None:
            return sum(1 for id in ids if self.ack(id))
        owner = entries[0].consumer
        if owner is None or not all(entry.consumer is owner for entry in entries):
            for entry in entries:
                self._forget(entry)
            return len(entries)
        by_time = self._by_time
        pairs = [(entry.delivery_time, entry.id) for entry in entries]
        if not by_time.remove_run(pairs):
            for pair in pairs:
                by_time.remove(pair)
        cpel = owner.pel
        if cpel.pop_run(ids) is None:
            for id in ids:
                del cpel[id]
        for entry in entries:
            entry.consumer = None
        return len(entries)

    def _forget(self, entry: PendingEntry) -> None:
        """The rest of :meth:`ack` for a record already out of ``pel``."""
        id = entry.id
        self._by_time.remove((entry.delivery_time, id))
        if entry.consumer is not None:
            del entry.consumer.pel[id]
            entry.consumer = None
        else:
            self._unnack(id)

    def claim(
        self, id: StreamID, consumer: Consumer, delivery_time: int, delivery_count: int
    ) -> PendingEntry:
        """Give pending entry ``id`` to ``consumer`` with the given time and count.

        XCLAIM / XAUTOCLAIM: the record moves from its owner (or from no
        owner) to ``consumer``; when ``id`` is not pending a new record is
        made (XCLAIM FORCE, and the XCLAIM form XREADGROUP propagates).  The
        command decides the time and count (IDLE, TIME, RETRYCOUNT, JUSTID,
        "+1 unless JUSTID") and whether the stream entry still exists; this
        method only applies them.  It does not touch the consumer's
        ``seen_time``/``active_time``: the command sets those to the command
        time, which TIME and IDLE do not change.

        Cost: O(log N), O(1) amortised for an ID above every other and the
        newest time; any other insert adds a bounded memmove or a one-time
        conversion of an index (see the cost model in the module docstring).
        """
        self._own(consumer)
        entry = self.pel.get(id)
        if entry is None:
            entry = PendingEntry(id, delivery_time, delivery_count, consumer)
            self.pel[id] = entry
            consumer.pel[id] = entry
        else:
            self._by_time.remove((entry.delivery_time, id))
            if entry.consumer is None:
                self._unnack(id)
            self._move(entry, consumer)
            entry.delivery_time = delivery_time
            entry.delivery_count = delivery_count
        self._by_time.add((delivery_time, id))
        return entry

    def touch_delivery(self, entry: PendingEntry, now_ms: int, increment: bool = True) -> None:
        """Set ``entry``'s delivery time to ``now_ms`` and (by default) count one more delivery.

        XREADGROUP with an explicit ID re-delivers a consumer's history this
        way (Redis 7: time = now, count + 1, owner unchanged).

        Cost: O(log N).
        """
        if self.pel.get(entry.id) is not entry:
            raise ValueError(f"{entry!r} is not pending in group {self.name!r}")
        by_time = self._by_time
        by_time.remove((entry.delivery_time, entry.id))
        entry.delivery_time = now_ms
        if increment:
            entry.delivery_count += 1
        by_time.add((now_ms, entry.id))

    def release(self, id: StreamID, delivery_time: int = 0) -> PendingEntry | None:
        """Make pending entry ``id`` unowned; None if it is not pending.

        For XNACK (Redis 8.8): the record leaves its owner's PEL, stays in
        the group PEL with ``consumer`` None, and its delivery time becomes
        ``delivery_time`` (0 by default, so :meth:`idle_first` yields it
        before any owned entry).  It joins the tail of the NACK zone; an
        entry already unowned moves to the tail (Redis: a re-NACKed entry is
        claimed after the others).  The count is left to the command.

        Cost: O(log N); the time 0 goes to the front of the time index, which
        a large PEL pays once by converting that index (see the cost model
        in the module docstring).
        """
        entry = self.pel.get(id)
        if entry is None:
            return None
        by_time = self._by_time
        by_time.remove((entry.delivery_time, id))
        if entry.consumer is not None:
            del entry.consumer.pel[id]
            entry.consumer = None
        else:
            self._unnack(id)
        entry.delivery_time = delivery_time
        by_time.add((delivery_time, id))
        self._nack(id)
        return entry

    def add_unowned(
        self, id: StreamID, delivery_count: int, delivery_time: int = 0
    ) -> PendingEntry:
        """A new unowned pending record for ``id``, at the tail of the NACK zone.

        XNACK ... FORCE (Redis 8.8), for an ID that is not pending; the
        command checks that the stream entry exists and picks the count.
        Raises ValueError if ``id`` is already pending (use :meth:`release`).

        Cost: O(log N); time 0 goes before the owned entries, which a large
        PEL pays once by converting its time index (see the cost model in
        the module docstring).
        """
        if id in self.pel:
            raise ValueError(f"{id} is already pending in group {self.name!r}")
        entry = PendingEntry(id, delivery_time, delivery_count, None)
        self.pel[id] = entry
        self._by_time.add((delivery_time, id))
        self._nack(id)
        return entry

    def drop_range(self, start: StreamID, end: StreamID) -> int:
        """Remove every pending record with ``start <= id <= end`` (owned or
        not), as XACK would; returns how many went.

        For trimming with DELREF (Redis 8.2), which drops the references to
        the entries it trims.  Cost: O(log N + k log N) for k removed.
        """
        gone = [e.id for e in self.pending_range(start, end)]
        for id in gone:
            self.ack(id)
        return len(gone)

    @property
    def nacked_count(self) -> int:
        """How many records are in the NACK zone (XINFO STREAM FULL ``nacked-count``).

        Cost: O(1).
        """
        return len(self._nack_seq)

    def nack_zone(self, after: int, count: int) -> list[tuple[int, StreamID]]:
        """Up to ``count`` ``(position, id)`` pairs of the NACK zone in zone
        order (the order unowned records are claimed in), from the first
        position above ``after`` (-1: from the start).  Positions only
        compare; a copy of the group rebuilds the order by adding the IDs
        with :meth:`add_unowned` in this order.

        Cost: O(log N + count).
        """
        zone = self._nacked
        return [(seq, zone[seq])
                for seq in islice(zone.irange(after, None, (False, True)), count)]

    # -- scans ------------------------------------------------------------------

    def pending_range(
        self, start: StreamID, end: StreamID, rev: bool = False
    ) -> Iterator[PendingEntry]:
        """Pending entries with ``start <= id <= end``, in ID order (reversed with ``rev``).

        Lazy: take what you need with ``itertools.islice``.  The group may
        change while the iterator is suspended; it goes on after the last ID
        it yielded and never yields a record that has left the PEL.

        Cost: O(log N) to seek, O(1) amortised per record yielded (plus
        O(log N) per batch of up to 1024).
        """
        pel = self.pel
        for id in _walk(pel.irange, start, end, rev):
            entry = pel.get(id)
            if entry is not None:
                yield entry

    def consumer_pending_range(
        self, consumer: Consumer, start: StreamID, end: StreamID, rev: bool = False
    ) -> Iterator[PendingEntry]:
        """As :meth:`pending_range`, for the entries ``consumer`` owns.

        Records that leave the consumer while the iterator is suspended are
        skipped.  Cost: O(log P) to seek, O(1) amortised per record.
        """
        cpel = consumer.pel
        for id in _walk(cpel.irange, start, end, rev):
            entry = cpel.get(id)  # in this consumer's PEL: owned by it (invariant 3)
            if entry is not None:
                yield entry

    def idle_first(self, now_ms: int, min_idle_ms: int) -> Iterator[PendingEntry]:
        """Pending entries idle for at least ``min_idle_ms``, longest idle first.

        Idle time is ``now_ms - delivery_time``; ties go in ID order.
        Unowned entries are included (XNACK leaves them at time 0, so they
        come first).  For XREADGROUP CLAIM (8.4) and idle-based reclaiming.

        Lazy, and safe to claim or ack records while iterating: each record
        is yielded at most once per iterator, even if claiming it leaves it
        idle enough to qualify again (``min_idle_ms`` 0).

        Cost: O(log N) to seek, O(1) amortised per record yielded.
        """
        threshold = now_ms - min_idle_ms
        pel = self.pel
        seen: set[StreamID] = set()
        for time, id in _walk(self._by_time.irange, None, (threshold, MAX_ID), False):
            entry = pel.get(id)
            if entry is None or entry.delivery_time != time or id in seen:
                continue
            seen.add(id)
            yield entry

    def claimable(self, now_ms: int, min_idle_ms: int) -> Iterator[PendingEntry]:
        """What XREADGROUP ... CLAIM takes, in the order it takes it.

        First the NACK zone (unowned records, oldest release first, whatever
        their idle time: Redis 8.8 makes them claimable at once), then owned
        records idle for at least ``min_idle_ms``, longest idle first (ties
        in ID order), as :meth:`idle_first`.

        Lazy, and safe to claim or ack records while iterating; each record
        is yielded at most once per iterator.

        Cost: O(log N) to seek, O(1) amortised per record yielded.
        """
        nacked = self._nacked
        pel = self.pel
        seen: set[StreamID] = set()
        for seq in _walk(nacked.irange, None, None, False):
            id = nacked.get(seq)
            if id is None:
                continue
            entry = pel.get(id)
            if entry is None or entry.consumer is not None:
                continue
            seen.add(id)
            yield entry
        for entry in self.idle_first(now_ms, min_idle_ms):
            if entry.consumer is None or entry.id in seen:
                continue
            yield entry

    def summary(self) -> tuple[int, StreamID | None, StreamID | None, list[tuple[bytes, int]]]:
        """XPENDING's summary: count, smallest and largest pending ID, per-consumer counts.

        The per-consumer list holds only consumers with pending entries, in
        name order (redis-server 7.0.15 leaves out consumers with none).
        Unowned entries count in the total only.  An empty PEL gives
        ``(0, None, None, [])``.

        Cost: O(C).
        """
        pel = self.pel
        if not pel:
            return 0, None, None, []
        counts = [(c.name, len(c.pel)) for c in self.consumers.values() if c.pel]
        return len(pel), pel.peekitem(0)[0], pel.peekitem(-1)[0], counts

    # -- position and lag ---------------------------------------------------

    def advance(self, id: StreamID, stream: Stream) -> bool:
        """A ``>`` read delivered entry ``id``: move ``last_id`` to it and count it.

        Redis 8 rules: when ``entries_read`` is known, the group's position
        is not behind the stream's first entry, and no tombstone lies at or
        after that position, ``entries_read`` grows by one; otherwise, if the
        stream ever had entries, ``entries_read`` becomes
        :func:`estimate_entries_read` of ``id`` (possibly unknown, -1).
        (Redis 7.0 started the tombstone test at ``id`` and did not look at
        the first entry, so a deleted entry between the old position and
        ``id``, or a trim past the position, left entries-read wrong:
        redis/redis PRs #13338 and #13958.)

        Returns False, changing nothing, when ``id <= last_id`` (Redis only
        counts entries beyond the group's position).

        Cost: O(1).
        """
        if id <= self.last_id:
            return False
        if self._counts_on(stream):
            self.entries_read += 1
        elif stream.entries_added:
            self.entries_read = estimate_entries_read(stream, id)
        self.last_id = id
        return True

    def _counts_on(self, stream: Stream) -> bool:
        """Whether the next delivery may simply add one to ``entries_read``."""
        return (self.entries_read != UNKNOWN and self.last_id >= stream.first_id
                and not range_has_tombstones(stream, self.last_id, None))

    def advance_all(self, ids: list[StreamID], stream: Stream) -> bool:
        """:meth:`advance` for each of ``ids`` in turn (strictly increasing, as a
        ``>`` read yields them); whether ``last_id`` moved.

        When the first is beyond ``last_id`` and :meth:`advance` would count
        it on (then it counts the others on too: the position only moves
        forward, past no tombstone), that is ``entries_read += k`` and
        ``last_id`` the last ID; otherwise each ID takes :meth:`advance`'s
        path.

        Cost: O(1) in the first case, else O(k) for k IDs.
        """
        if not ids:
            return False
        first = ids[0]
        if first > self.last_id and self._counts_on(stream):
            self.entries_read += len(ids)
            self.last_id = ids[-1]
            return True
        moved = False
        for id in ids:
            moved = self.advance(id, stream) or moved
        return moved

    def set_id(self, id: StreamID, entries_read: int | None, stream: Stream) -> None:
        """XGROUP SETID: move ``last_id`` to ``id``; ``entries_read`` None means unknown (-1).

        An ``entries_read`` above the stream's entries-added is lowered to
        it (Redis 8.2.2, redis/redis#14257; 7.0 stored it and then reported
        a negative lag).  The range check (>= 0 or -1) is the command's.

        Cost: O(1).
        """
        self.last_id = id
        self.entries_read = clamp_entries_read(
            UNKNOWN if entries_read is None else entries_read, stream)

    def lag(self, stream: Stream) -> int | None:
        """XINFO GROUPS ``lag``: entries not yet delivered to the group, or None (nil).

        Redis 8 rules (7.0's, with the fixes of redis/redis PRs #13338,
        #13473 and #13958):

        1. A stream that never had entries (``entries_added == 0``), or one
           that is empty now: 0.
        2. The group's position and the largest deleted ID both before the
           first entry (everything left is new to the group, whatever was
           trimmed or deleted before): the stream's length.
        3. ``entries_read`` known and no tombstone at or after ``last_id``
           (:func:`range_has_tombstones`): ``entries_added - entries_read``.
        4. Otherwise ``entries_added -`` :func:`estimate_entries_read` of
           ``last_id``, or None when that is unknown.

        The estimate is not stored: XINFO shows ``entries-read`` nil and a
        number for ``lag`` (``XGROUP CREATE s g $``: nil and 0).

        Cost: O(1).
        """
        added = stream.entries_added
        if added == 0 or stream.length == 0:
            return 0
        first = stream.first_id
        if self.last_id < first and stream.max_deleted_entry_id < first:
            return stream.length
        if self.entries_read != UNKNOWN and not range_has_tombstones(stream, self.last_id, None):
            return added - self.entries_read
        estimate = estimate_entries_read(stream, self.last_id)
        if estimate == UNKNOWN:
            return None
        return added - estimate

    # -- invariants -----------------------------------------------------------

    def check(self) -> None:
        """Assert every invariant listed at the top of this module.

        For tests and debugging.  Cost: O(N log N + C).
        """
        assert isinstance(self.last_id, StreamID), f"last_id {self.last_id!r}"
        assert isinstance(self.entries_read, int) and self.entries_read >= UNKNOWN, (
            f"entries_read {self.entries_read!r}"
        )
        self.pel._check()
        self.consumers._check()
        self._by_time._check()
        owned = 0
        for id, entry in self.pel.items():
            assert isinstance(id, StreamID), f"PEL key {id!r}"
            assert entry.id == id, f"PEL {id}: record says {entry.id}"
            assert isinstance(entry.delivery_count, int) and entry.delivery_count >= 0, (
                f"PEL {id}: delivery_count {entry.delivery_count!r}"
            )
            assert isinstance(entry.delivery_time, int), f"PEL {id}: delivery_time"
            owner = entry.consumer
            if owner is not None:
                assert self.consumers.get(owner.name) is owner, (
                    f"PEL {id}: owner {owner.name!r} is not a consumer of the group"
                )
                assert owner.pel.get(id) is entry, f"PEL {id}: not in {owner.name!r}'s PEL"
                owned += 1
        in_consumers = 0
        for name, consumer in self.consumers.items():
            assert consumer.name == name, f"consumer {name!r} is called {consumer.name!r}"
            consumer.pel._check()
            for id, entry in consumer.pel.items():
                assert self.pel.get(id) is entry, f"{name!r}'s PEL {id}: not the group's record"
                assert entry.consumer is consumer, f"{name!r}'s PEL {id}: owned by another"
            in_consumers += len(consumer.pel)
        assert in_consumers == owned, f"consumer PELs hold {in_consumers}, owned {owned}"
        expect = sorted((entry.delivery_time, id) for id, entry in self.pel.items())
        assert list(self._by_time) == expect, "time index differs from the PEL"
        self._nacked._check()
        unowned = {id for id, entry in self.pel.items() if entry.consumer is None}
        assert set(self._nack_seq) == unowned, "NACK zone differs from the unowned records"
        assert len(self._nacked) == len(self._nack_seq), "NACK zone index sizes differ"
        for id, seq in self._nack_seq.items():
            assert self._nacked.get(seq) == id, f"NACK zone {id}: sequence {seq} mismatch"
            assert seq < self._nack_next, f"NACK zone {id}: sequence {seq} not issued"

    # -- helpers ----------------------------------------------------------------

    def _nack(self, id: StreamID) -> None:
        """Put ``id`` (unowned, not in the zone) at the tail of the NACK zone."""
        seq = self._nack_next
        self._nack_next = seq + 1
        self._nacked[seq] = id
        self._nack_seq[id] = seq

    def _unnack(self, id: StreamID) -> None:
        """Take ``id`` out of the NACK zone (it is acked, owned again, or moves)."""
        seq = self._nack_seq.pop(id, None)
        if seq is not None:
            del self._nacked[seq]

    def _own(self, consumer: Consumer) -> None:
        if self.consumers.get(consumer.name) is not consumer:
            raise ValueError(f"{consumer!r} is not a consumer of group {self.name!r}")

    @staticmethod
    def _move(entry: PendingEntry, consumer: Consumer) -> None:
        """Re-own ``entry`` (already in the group PEL) to ``consumer``."""
        old = entry.consumer
        if old is consumer:
            return
        if old is not None:
            del old.pel[entry.id]
        entry.consumer = consumer
        consumer.pel[entry.id] = entry


def range_has_tombstones(
    stream: Stream, start: StreamID | None = None, end: StreamID | None = None
) -> bool:
    """Whether a deleted entry may lie in ``[start, end]`` (None: open end).

    Redis keeps only the largest deleted ID, so this asks whether
    ``max_deleted_entry_id`` is in the range, and says no when the stream
    is empty or nothing was ever deleted (0-0).  (Redis 7.0 also said no
    when the largest deleted ID was below the first entry, even for a
    range starting before it: redis/redis PR #13338.)

    Cost: O(1).
    """
    deleted = stream.max_deleted_entry_id
    if stream.length == 0 or deleted == MIN_ID:
        return False
    low = MIN_ID if start is None else start
    high = MAX_ID if end is None else end
    return low <= deleted <= high


def estimate_entries_read(stream: Stream, id: StreamID) -> int:
    """The logical offset of ``id`` (entries added up to and including it), or -1.

    Redis 8's estimate, for a group positioned at ``id``:

    - the stream never had entries: 0;
    - the stream is empty and ``id <= last_id``: ``entries_added``;
    - ``id`` (not 0-0) before the largest deleted ID: unknown (a deleted
      entry lies ahead of it; PR #13338);
    - ``id`` is the stream's ``last_id``: ``entries_added``;
    - ``id`` is beyond ``last_id``: unknown;
    - no tombstone in the stream (none ever, or all below the first entry):
      ``id`` before the first entry gives ``entries_added - length``, ``id``
      equal to it ``entries_added - length + 1``;
    - anything else: unknown (-1).

    Cost: O(1).
    """
    added = stream.entries_added
    if added == 0:
        return 0
    last = stream.last_id
    if stream.length == 0 and id <= last:
        return added
    deleted = stream.max_deleted_entry_id
    if id != MIN_ID and id < deleted:
        return UNKNOWN
    if id == last:
        return added
    if id > last:
        return UNKNOWN
    first = stream.first_id
    if deleted == MIN_ID or deleted < first:
        if id < first:
            return added - stream.length
        if id == first:
            return added - stream.length + 1
    return UNKNOWN


def clamp_entries_read(entries_read: int, stream: Stream) -> int:
    """An entries-read given by XGROUP CREATE/SETID, or left by XSETID's
    ENTRIESADDED, never above the stream's entries-added (Redis 8.2.2,
    redis/redis#14257; and #15488 for XSETID); unknown (-1) stays.  Cost: O(1)."""
    if entries_read > stream.entries_added:
        return stream.entries_added
    return entries_read


def referenced_by(groups: Iterable[ConsumerGroup]) -> Callable[[StreamID], bool] | None:
    """A test "does some group still need entry ``id``?", or None with no groups.

    For ACKED (Redis 8.2: XDELEX, XACKDEL, and trimming by XADD/XTRIM): an
    entry is still needed when some group has not delivered it yet (``id``
    above the group's ``last_id``) or has it pending, owned or not.  Only
    entries delivered to and acknowledged by every group are free to go.

    The groups must not be added or removed while the test is in use
    (pending records may change).  Cost: O(G) to build, O(G) per call.
    """
    groups = list(groups)
    if not groups:
        return None
    lowest = min(group.last_id for group in groups)
    pels = [group.pel for group in groups]

    def referenced(id: StreamID) -> bool:
        return id > lowest or any(id in pel for pel in pels)

    return referenced


def _walk(
    irange: Callable[..., Iterator[Any]], low: Any, high: Any, rev: bool
) -> Iterator[Any]:
    """Keys in ``[low, high]`` of a sorted container, in batches, re-seeking between them.

    ``irange`` is the container's ``irange`` method (a sorted index's or a
    SortedDict's).  Their iterators must not outlive a change to the
    container; this one holds none while its caller runs, so the caller may
    change the container between keys.  Keys are snapshots: the caller
    checks they still hold.
    """
    batch = _FIRST_BATCH
    inclusive = (True, True)
    while True:
        keys = list(islice(irange(low, high, inclusive, rev), batch))
        yield from keys
        if len(keys) < batch:
            return
        if rev:
            high = keys[-1]
            inclusive = (True, False)
        else:
            low = keys[-1]
            inclusive = (False, True)
        batch = min(batch * 2, _MAX_BATCH)
