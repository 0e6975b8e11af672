"""The hash type: field -> value, both bytes.

A :class:`Hash` keeps its fields in one ``dict``, which holds them in
insertion order; replacing a field's value keeps its place and deleting a
field closes the gap.  That is exactly the order of Redis's listpack
encoding, so while a hash is small (``object_encoding() == b"listpack"``)
HGETALL, HKEYS, HVALS and HSCAN list fields in the same order as Redis.

The encoding follows Redis's rule: a hash starts as a listpack and becomes a
hashtable, for good, once it holds more than ``hash-max-listpack-entries``
fields or a field or value longer than ``hash-max-listpack-value`` bytes
(:meth:`Hash.convert_if`; the thresholds are the caller's, this module reads
no configuration).  Only the name changes: the storage is the same dict.  A
big hash lists its fields in insertion order too, where Redis uses its hash
table's bucket order; no client can rely on either.

HSCAN of a hashtable-encoded hash needs a cursor that survives changes
between calls: :class:`_Buckets` files the fields by hash in ``2**bits``
buckets, visited in reverse binary order (Redis's ``dictScan`` cursor), so a
field present from the first call to the last is returned at least once
even when the table grows or shrinks in between.  It is built on the first
HSCAN of a big hash (O(N)) and kept up to date from then on (O(1) amortised
per change).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator

LISTPACK = b"listpack"
LISTPACK_EX = b"listpackex"  # a small hash that has (or had) field TTLs, Redis 7.4+
HASHTABLE = b"hashtable"


def _reverse_bits(value: int, bits: int) -> int:
    """``value``'s lowest ``bits`` bits in reverse order.  O(bits)."""
    return int(format(value, f"0{bits}b")[::-1], 2) if bits else 0


class _Buckets:
    """Fields filed by ``hash(field)`` for HSCAN's cursor (1 to 8 per bucket
    on average).  add/discard O(1) amortised (a resize refiles every field,
    at most once per doubling or halving)."""

    __slots__ = ("bits", "buckets", "count")

    MIN_BITS = 2

    def __init__(self, fields: Iterator[bytes] | list[bytes]) -> None:
        self.bits = self.MIN_BITS
        self.buckets: dict[int, set[bytes]] = {}
        self.count = 0
        for field in fields:
            self.add(field)

    def add(self, field: bytes) -> None:
        bucket = self.buckets.setdefault(hash(field) & ((1 << self.bits) - 1), set())
        if field not in bucket:
            bucket.add(field)
            self.count += 1
            if self.count > 8 << self.bits:
                self._resize(self.bits + 1)

    def discard(self, field: bytes) -> None:
        number = hash(field) & ((1 << self.bits) - 1)
        bucket = self.buckets.get(number)
        if bucket is not None and field in bucket:
            bucket.discard(field)
            if not bucket:
                del self.buckets[number]
            self.count -= 1
            if self.bits > self.MIN_BITS and self.count < (1 << self.bits) // 2:
                self._resize(self.bits - 1)

    def _resize(self, bits: int) -> None:
        fields = [f for bucket in self.buckets.values() for f in bucket]
        self.bits = bits
        mask = (1 << bits) - 1
        buckets: dict[int, set[bytes]] = {}
        for field in fields:
            buckets.setdefault(hash(field) & mask, set()).add(field)
        self.buckets = buckets

    def bucket(self, cursor: int) -> tuple[int, set[bytes] | tuple[()]]:
        """The fields in the cursor's bucket and the cursor that follows
        (0 once every bucket was visited).  O(bits + bucket size)."""
        bits = self.bits
        mask = (1 << bits) - 1
        number = cursor & mask
        step = _reverse_bits(number, bits) + 1
        following = 0 if step > mask else _reverse_bits(step, bits)
        return following, self.buckets.get(number, ())


class Hash:
    """A hash value.  Costs: get/set/delete/contains O(1); listing O(N);
    a random field O(N) (the dict has no random access); HSCAN of a big hash
    O(COUNT) per call after an O(N) first call.  Field TTLs (``ttl``, with a
    heap of deadlines): set O(log T), persist/delete O(1) amortised, the
    earliest deadline O(log T) amortised, expiring k due fields O(k log T).
    The type knows no clock: the database expires due fields (keyspace.py)."""

    TYPE_NAME = b"hash"  # what TYPE says

    __slots__ = ("map", "big", "_scan", "ttl", "_heap", "ex")

    def __init__(self, items: dict[bytes, bytes] | None = None, big: bool = False) -> None:
        self.map: dict[bytes, bytes] = items if items is not None else {}
        self.big = big
        self._scan: _Buckets | None = None
        # Field expiry (Redis 7.4's HEXPIRE family): field -> deadline (Unix
        # ms), and a heap of (deadline, field) holding an entry for every
        # deadline in ``ttl`` plus stale ones (dropped when they surface).
        self.ttl: dict[bytes, int] = {}
        self._heap: list[tuple[int, bytes]] = []
        self.ex = False  # a listpack that took a TTL reports "listpackex" for good

    def __len__(self) -> int:
        return len(self.map)

    def __contains__(self, field: bytes) -> bool:
        return field in self.map

    def __repr__(self) -> str:
        return f"Hash({self.map!r}, {self.object_encoding().decode()})"

    def copy(self) -> Hash:
        """An independent hash with the same fields in the same order and
        encoding (COPY).  O(N)."""
        return Hash(dict(self.map), self.big)

    def object_encoding(self) -> bytes:
        """OBJECT ENCODING: ``listpack`` (``listpackex`` once a field was
        given a TTL, as Redis 7.4) until converted, then ``hashtable``.  O(1)."""
        if self.big:
            return HASHTABLE
        return LISTPACK_EX if self.ex else LISTPACK

    # -- reads ------------------------------------------------------------------
    def get(self, field: bytes) -> bytes | None:
        """The value of ``field``, None if absent.  O(1)."""
        return self.map.get(field)

    def fields(self) -> list[bytes]:
        """Every field, in order.  O(N)."""
        return list(self.map)

    def values(self) -> list[bytes]:
        """Every value, in field order.  O(N)."""
        return list(self.map.values())

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every (field, value) pair, in order.  O(N)."""
        return list(self.map.items())

    def flat(self) -> list[bytes]:
        """``[f1, v1, f2, v2, ...]`` in order.  O(N)."""
        out: list[bytes] = []
        for pair in self.map.items():
            out += pair
        return out

    def random_items(self, count: int, unique: bool) -> list[tuple[bytes, bytes]]:
        """``count`` random pairs: distinct ones (all of them, in order, when
        ``count`` reaches the size) or, when not ``unique``, drawn with
        repetition.  O(N + count)."""
        pairs = list(self.map.items())
        if not pairs:
            return []
        if unique:
            if count >= len(pairs):
                return pairs
            return random.sample(pairs, count)
        return random.choices(pairs, k=count)

    # -- writes -----------------------------------------------------------------
    def set(self, field: bytes, value: bytes, keep_ttl: bool = False) -> bool:
        """Store a field's value (an existing field keeps its place); True
        when the field is new.  The field's TTL goes unless ``keep_ttl``
        (HSET clears it, HINCRBY keeps it).  O(1) (amortised, with the HSCAN
        index)."""
        new = field not in self.map
        self.map[field] = value
        if not keep_ttl and self.ttl and self.ttl.pop(field, None) is not None:
            self._compact()
        if new and self._scan is not None:
            self._scan.add(field)
        return new

    def delete(self, field: bytes) -> bool:
        """Remove a field; True when it was there.  O(1) amortised."""
        if self.map.pop(field, None) is None:
            return False
        if self.ttl and self.ttl.pop(field, None) is not None:
            self._compact()
        if self._scan is not None:
            self._scan.discard(field)
        return True

    def convert_if(self, max_entries: int, max_value: int, longest: int = 0) -> None:
        """Become a hashtable (for good) when the hash holds more than
        ``max_entries`` fields or ``longest`` (the longest field or value
        just written) exceeds ``max_value``.  O(1)."""
        if not self.big and (len(self.map) > max_entries or longest > max_value):
            self.big = True

    def fits_listpack(self, max_entries: int, max_value: int) -> bool:
        """Whether a loaded hash may be a listpack (Redis's choice when it
        reads a snapshot).  O(N)."""
        if len(self.map) > max_entries:
            return False
        return all(len(f) <= max_value and len(v) <= max_value for f, v in self.map.items())

    # -- field expiry ---------------------------------------------------------------
    def set_ttl(self, field: bytes, when_ms: int) -> None:
        """Give a present field a deadline (Unix ms).  O(log T) for T TTLs."""
        self.ttl[field] = when_ms
        heapq.heappush(self._heap, (when_ms, field))
        self.ex = True
        self._compact()

    def persist(self, field: bytes) -> bool:
        """Drop a field's deadline; True when it had one.  O(1) amortised
        (the heap entry goes stale)."""
        if self.ttl.pop(field, None) is None:
            return False
        self._compact()
        return True

    def _compact(self) -> None:
        """Rebuild the heap once more than half of it is stale: O(T), at
        most once per T/2 changes, so O(1) amortised."""
        if len(self._heap) > 2 * len(self.ttl) + 32:
            self._heap = [(when, field) for field, when in self.ttl.items()]
            heapq.heapify(self._heap)

    def next_deadline(self) -> int | None:
        """The earliest field deadline, None without TTLs.  O(log T)
        amortised (stale heap entries are dropped on the way)."""
        if not self.ttl:
            if self._heap:
                self._heap = []
            return None
        heap, ttl = self._heap, self.ttl
        while heap and ttl.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0]

    def without_due(self, now_ms: int) -> Hash | None:
        """The hash as it reads at ``now_ms`` without changing it: itself when
        no field is past its deadline, else a copy without those fields (the
        others keep theirs), None when none is left.  O(log T), O(N) when a
        field is due (while CLIENT PAUSE holds expiry back)."""
        first = self.next_deadline()
        if first is None or first > now_ms:
            return self
        view = Hash(dict(self.map), self.big)
        view.ex = self.ex
        for field, when in self.ttl.items():
            view.set_ttl(field, when)
        view.pop_expired(now_ms)
        return view if len(view) else None

    def pop_expired(self, now_ms: int, budget: int | None = None) -> list[bytes]:
        """Delete the fields whose deadline is ``<= now_ms`` (at most
        ``budget`` of them); the deleted fields, earliest first.
        O(k log T) for k fields looked at."""
        out: list[bytes] = []
        ttl = self.ttl
        # self._heap is read afresh each turn: a delete may rebuild it.
        while self._heap and self._heap[0][0] <= now_ms and (budget is None or len(out) < budget):
            when, field = heapq.heappop(self._heap)
            if ttl.get(field) == when:
                self.delete(field)
                out.append(field)
        if not ttl and self._heap:
            self._heap = []
        return out

    # -- HSCAN ------------------------------------------------------------------
    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One HSCAN step: (next cursor, fields).  A listpack hash returns
        every field at once with cursor 0 (as Redis).  A big hash visits
        buckets from ``cursor`` until it has ``count`` fields or has looked
        at ``10 * count`` buckets.  O(count) amortised; O(N) on the first
        call of a big hash (the index is built)."""
        if not self.big:
            return 0, list(self.map)
        index = self._scan
        if index is None:
            index = self._scan = _Buckets(self.map)
        found: list[bytes] = []
        budget = 10 * count
        while True:
            cursor, bucket = index.bucket(cursor)
            found.extend(bucket)
            budget -= 1
            if cursor == 0 or len(found) >= count or budget <= 0:
                return cursor, found

    # -- checks -----------------------------------------------------------------
    def check(self, max_entries: int | None = None, max_value: int | None = None) -> None:
        """Assert the invariants (tests): bytes only; the HSCAN index, when
        built, holds exactly the fields, each in its bucket; a listpack
        respects the given thresholds.  O(N)."""
        for field, value in self.map.items():
            assert type(field) is bytes and type(value) is bytes, (field, value)
        live = set(self._heap)
        for field, when in self.ttl.items():
            assert field in self.map, ("TTL of an absent field", field)
            assert type(when) is int and when >= 0, (field, when)
            assert (when, field) in live, ("TTL without a heap entry", field)
        if self.ttl:
            assert self.ex or self.big, "field TTLs in a plain listpack"
        assert len(self._heap) <= 2 * len(self.ttl) + 32, "heap of stale entries"
        if self._scan is not None:
            assert self.big
            index = self._scan
            mask = (1 << index.bits) - 1
            filed = [f for bucket in index.buckets.values() for f in bucket]
            assert sorted(filed) == sorted(self.map), "HSCAN index out of step"
            assert index.count == len(self.map)
            for number, bucket in index.buckets.items():
                assert bucket, "empty bucket kept"
                assert all(hash(f) & mask == number for f in bucket)
        if not self.big and max_entries is not None and max_value is not None:
            assert self.fits_listpack(max_entries, max_value), "listpack over the limits"
