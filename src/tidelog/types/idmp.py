"""Idempotent production (Redis 8.6 ``XADD ... IDMP``): one stream's IDMP state.

A producer (``pid``) tags each entry it adds with an idempotent ID (``iid``);
the stream remembers, per producer, which stream ID each recent iid was added
under, so a retried XADD adds nothing and answers the original ID.  Both are
bytes; any value but the empty string is allowed.

Representation::

    IdmpState  duration 100 (s), maxsize 100 (iids per pid)
               iids_added 5, iids_duplicates 2     lifetime counters
               iids_tracked 4                      sum of the maps' sizes
      producers  OrderedDict, pid -> producer map (sweep order, see expire)
        b"orders"  OrderedDict, oldest first:  b"r-1" -> (1700-0, t=1700)
                                                 b"r-2" -> (1701-0, t=1701)
        b"audit"   OrderedDict:                b"\\x8f..." -> (1702-0, t=1702)

Each pair carries the time ``t`` (Unix ms) it counts its age from.  A pair
*expires* once ``t <= now - duration * 1000``: a retry is recognised while it
comes less than ``duration`` seconds after the original, and while fewer than
``maxsize`` newer iids were recorded for its producer (the oldest iid is
evicted when a producer's map would grow past ``maxsize``).

The time of a pair: Redis ages a pair by its entry's ID (``id.ms``), which
never expires anything once the stream's last ID is ahead of the clock (every
later ``*`` ID inherits that future time; redis/redis#15836).  Here ``t`` is
``min(id.ms, now)`` - the entry's time as Redis has it whenever that is not in
the future, the recording time otherwise - raised to the time of the
producer's newest pair, so each producer map stays ordered by ``t`` and
expiry can stop at the first pair still alive.  Nothing can then stay past
``duration`` after the clock reaches the time it was recorded at, and a pair
replayed later (AOF, replication) ages from its entry's time, as in Redis.

Costs: lookup, record and evict are O(1) (dict operations); expiry removes
from the oldest end of each producer map and stops at the first live pair,
so it is O(1) amortised per pair ever recorded, plus O(1) per producer
visited.  The command layer expires a producer's map on every access of it
(so answers never depend on when the sweep last ran) and the engine's cron
sweeps all states with a work budget (``expire(now, budget)``).

Invariants that :meth:`IdmpState.check` asserts:

1. ``1 <= duration <= 86400`` and ``1 <= maxsize <= 10000``.
2. No producer map is empty, and none holds more than ``maxsize`` pairs.
3. Within a producer map the times never decrease, oldest first.
4. ``iids_tracked`` is the total number of pairs.
"""

from __future__ import annotations

import hashlib
import sys
from collections import OrderedDict
from collections.abc import Iterator, Sequence

from tidelog.ids import StreamID

DURATION_MIN, DURATION_MAX = 1, 86400
MAXSIZE_MIN, MAXSIZE_MAX = 1, 10000
DEFAULT_DURATION = 100
DEFAULT_MAXSIZE = 100

_Pair = tuple[StreamID, int]  # (stream ID, time in ms)


def auto_iid(fields_values: Sequence[bytes]) -> bytes:
    """IDMPAUTO's iid: a 16-byte BLAKE2b digest of an entry's field/value pairs.

    Each pair is encoded as ``len(field) field len(value) value`` (lengths as
    8-byte little-endian numbers, so no two pair lists encode alike); the
    encodings are sorted, so the order of the pairs does not matter (Redis
    8.6 also deduplicates ``f1 a f2 b`` against ``f2 b f1 a``), and hashed
    with their count.  The digest depends on nothing but the bytes given.

    Cost: O(B + F log F) for B bytes in F pairs.
    """
    pairs = sorted(
        len(f).to_bytes(8, "little") + f + len(v).to_bytes(8, "little") + v
        for f, v in zip(fields_values[0::2], fields_values[1::2])
    )
    digest = hashlib.blake2b(digest_size=16, person=b"tidelog-idmp")
    digest.update(len(pairs).to_bytes(8, "little"))
    for pair in pairs:
        digest.update(pair)
    return digest.digest()


class IdmpState:
    """Per-stream IDMP settings, producer maps and counters."""

    __slots__ = ("duration", "maxsize", "producers", "iids_added", "iids_duplicates",
                 "iids_tracked", "__weakref__")

    def __init__(self, duration: int = DEFAULT_DURATION, maxsize: int = DEFAULT_MAXSIZE) -> None:
        if not DURATION_MIN <= duration <= DURATION_MAX:
            raise ValueError(f"duration {duration} out of range")
        if not MAXSIZE_MIN <= maxsize <= MAXSIZE_MAX:
            raise ValueError(f"maxsize {maxsize} out of range")
        self.duration = duration  # seconds
        self.maxsize = maxsize    # pairs per producer
        self.producers: OrderedDict[bytes, OrderedDict[bytes, _Pair]] = OrderedDict()
        self.iids_added = 0       # pairs ever recorded (lifetime)
        self.iids_duplicates = 0  # retries recognised (lifetime)
        self.iids_tracked = 0     # pairs held now

    def __repr__(self) -> str:
        return (f"<IdmpState duration={self.duration} maxsize={self.maxsize} "
                f"pids={len(self.producers)} iids={self.iids_tracked}>")

    @property
    def pids_tracked(self) -> int:
        return len(self.producers)

    # -- looking up and recording -----------------------------------------------

    def lookup(self, pid: bytes, iid: bytes, now_ms: int) -> StreamID | None:
        """The stream ID ``(pid, iid)`` was recorded with, if still in the window.

        Expires the producer's old pairs first.  Cost: O(1) amortised.
        """
        producer = self._live_producer(pid, now_ms)
        if producer is None:
            return None
        pair = producer.get(iid)
        return pair[0] if pair is not None else None

    def seen(self, pid: bytes, iid: bytes, now_ms: int) -> StreamID | None:
        """:meth:`lookup`, counting a hit in ``iids_duplicates`` (XADD's check)."""
        original = self.lookup(pid, iid, now_ms)
        if original is not None:
            self.iids_duplicates += 1
        return original

    def record(self, pid: bytes, iid: bytes, id: StreamID, now_ms: int) -> None:
        """Remember that ``(pid, iid)`` added entry ``id``; counts in ``iids_added``.

        A pair already held is replaced and becomes the producer's newest.
        When the producer then holds more than ``maxsize`` pairs, its oldest
        go.  Cost: O(1) amortised.
        """
        producer = self._live_producer(pid, now_ms)
        if producer is None:
            producer = self.producers[pid] = OrderedDict()
        elif producer.pop(iid, None) is not None:
            self.iids_tracked -= 1
        t = min(id.ms, now_ms)
        if producer:
            t = max(t, next(reversed(producer.values()))[1])
        producer[iid] = (id, t)
        self.iids_tracked += 1
        self.iids_added += 1
        while len(producer) > self.maxsize:
            producer.popitem(last=False)
            self.iids_tracked -= 1

    # -- configuration ----------------------------------------------------------

    def configure(self, duration: int | None = None, maxsize: int | None = None) -> bool:
        """Set either setting (None keeps it); a change clears every producer map.

        Returns whether anything changed.  The counters ``iids_added`` and
        ``iids_duplicates`` are lifetime counts and stay.  Cost: O(1), plus
        O(N) to free N pairs when cleared.
        """
        new_duration = self.duration if duration is None else duration
        new_maxsize = self.maxsize if maxsize is None else maxsize
        if not DURATION_MIN <= new_duration <= DURATION_MAX:
            raise ValueError(f"duration {new_duration} out of range")
        if not MAXSIZE_MIN <= new_maxsize <= MAXSIZE_MAX:
            raise ValueError(f"maxsize {new_maxsize} out of range")
        if (new_duration, new_maxsize) == (self.duration, self.maxsize):
            return False
        self.duration, self.maxsize = new_duration, new_maxsize
        self.clear()
        return True

    def clear(self) -> None:
        """Forget every pair (the settings and lifetime counters stay)."""
        self.producers.clear()
        self.iids_tracked = 0

    # -- expiry ---------------------------------------------------------------

    def expire(self, now_ms: int, budget: int | None = None) -> int:
        """Drop expired pairs and empty producers; returns the work done.

        Producers are visited from the front of ``producers``; each one
        visited and kept moves to the back, so successive calls with a small
        ``budget`` sweep every producer in turn.  Work is one unit per pair
        dropped plus one per producer visited; the call stops once it has
        done ``budget`` units (None: visit every producer once).

        Cost: O(work).
        """
        cutoff = now_ms - self.duration * 1000
        producers = self.producers
        work = 0
        for _ in range(len(producers)):
            if budget is not None and work >= budget:
                break
            pid, producer = next(iter(producers.items()))
            work += 1
            limit = None if budget is None else budget - work
            work += self._expire_producer(producer, cutoff, limit)
            if producer:
                producers.move_to_end(pid)
            else:
                del producers[pid]
        return work

    def _expire_producer(self, producer: OrderedDict[bytes, _Pair], cutoff: int,
                         limit: int | None = None) -> int:
        """Pop a producer's pairs with ``t <= cutoff``, oldest first; at most ``limit``."""
        dropped = 0
        while producer and (limit is None or dropped < limit):
            if next(iter(producer.values()))[1] > cutoff:
                break
            producer.popitem(last=False)
            dropped += 1
        self.iids_tracked -= dropped
        return dropped

    def _live_producer(self, pid: bytes, now_ms: int) -> OrderedDict[bytes, _Pair] | None:
        """A producer's map with its expired pairs gone (None if none is left)."""
        producer = self.producers.get(pid)
        if producer is None:
            return None
        self._expire_producer(producer, now_ms - self.duration * 1000)
        if not producer:
            del self.producers[pid]
            return None
        return producer

    # -- reading --------------------------------------------------------------

    def pairs(self) -> Iterator[tuple[bytes, bytes, StreamID, int]]:
        """Every ``(pid, iid, stream ID, time)`` held, each producer's oldest first."""
        for pid, producer in self.producers.items():
            for iid, (id, t) in producer.items():
                yield pid, iid, id, t

    def memory_usage(self) -> int:
        """Approximate bytes held.  Cost: O(N) for N pairs."""
        total = sys.getsizeof(self) + sys.getsizeof(self.producers)
        for pid, producer in self.producers.items():
            total += sys.getsizeof(pid) + sys.getsizeof(producer)
            for iid, pair in producer.items():
                total += sys.getsizeof(iid) + sys.getsizeof(pair)
        return total

    def check(self) -> None:
        """Assert the invariants listed at the top of this module.  Cost: O(N)."""
        assert DURATION_MIN <= self.duration <= DURATION_MAX, self.duration
        assert MAXSIZE_MIN <= self.maxsize <= MAXSIZE_MAX, self.maxsize
        total = 0
        for pid, producer in self.producers.items():
            assert producer, f"producer {pid!r} has no pairs"
            assert len(producer) <= self.maxsize, f"producer {pid!r} holds {len(producer)}"
            times = [t for _, t in producer.values()]
            assert times == sorted(times), f"producer {pid!r}: times out of order"
            total += len(producer)
        assert total == self.iids_tracked, f"iids_tracked {self.iids_tracked}, pairs {total}"
