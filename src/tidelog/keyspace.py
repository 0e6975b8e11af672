"""Databases: key -> value, expiry, watched keys.

A :class:`Database` maps keys (bytes) to values: ``bytes`` for plain strings,
:class:`~tidelog.types.stream.Stream` for streams.  Expiry deadlines (Unix
ms) live in a second dict, as in Redis.  Keys are expired lazily when looked
up and actively by :meth:`Database.expire_cycle`; every expiry is reported to
``on_expired`` so the engine can propagate a ``DEL``.

Hash field expiry (Redis 7.4): a hash's due fields are removed whenever
:meth:`Database.get`/:meth:`Database.peek` hands the hash out, and actively
by :meth:`Database.field_expire_cycle` (a heap of hashes by earliest field
deadline, a bounded budget per call); each batch is reported to
``on_fields_expired`` (the engine propagates ``HDEL key field``), and the key
goes with its last field.

WATCH support: :meth:`touch` marks every transaction watching a key as
dirty.  Every write to a key must call it (the command context does, through
``Ctx.modified``).  As in Redis, a key that was already expired (not yet
removed) when WATCHed is remembered as such: removing it then is no change
(FLUSHDB, SWAPDB and lazy expiry included), and FLUSHDB/SWAPDB touch only
the watched keys they really remove or replace (:meth:`touch_replaced`).
:meth:`touch` also tells ``on_touch`` (client-side caching: the engine's
tracking, set only while some client tracks keys), so that is the one place
every key modification is signalled.

SCAN support: every key is also filed in a :class:`KeyIndex` (buckets by
hash, Redis's reverse-binary cursor).  It is maintained by the methods
below, so values must be stored and removed through them, never through
``data`` directly.

Eviction marks: ``access`` holds, per key, what Redis keeps in a value's
24-bit ``lru`` field for ``maxmemory-policy`` (:mod:`tidelog.lfu`), in one
of two forms: a Unix ms time (>= 0), the last lookup or write (under LRU,
random, TTL and noeviction) or the last write only (LRM); or, under an LFU
policy, an LFU word stored bit-inverted (``~word``, so < 0).  The engine
sets the policy's kind with :meth:`Database.track`; a key keeps the form it
was last marked in, and is read the other way when the policy changed since,
exactly as Redis reinterprets the field (no conversion, nothing to walk).
Under LRU and the others, a lookup stamps the time (one dict store); the
LFU counter and the write-only stamps of LRM cost nothing while their
policies are not in force.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, Protocol, TypeVar

from .errors import WRONGTYPE, CommandError
from .keyslot import key_slot
from .lfu import Lfu, clock_idle_ms, lru_clock, new_word, word_of
from .types.hash import Hash
from .types.stream import Stream

T = TypeVar("T")


class Watcher(Protocol):
    """Anything that can be told a watched key changed (a client's MULTI state)."""

    dirty_cas: bool
    watched_expired: set[tuple[int, bytes]]  # (db, key) already expired when watched


def type_name(value: Any) -> bytes:
    """The name TYPE reports: ``bytes`` are strings; every other value type
    names itself (``TYPE_NAME``)."""
    if type(value) is bytes:
        return b"string"
    return value.TYPE_NAME


class Database:
    """One numbered database.  All costs are O(1) unless stated."""

    def __init__(self, index: int, now_ms: Callable[[], int]) -> None:
        self.index = index
        self.data: dict[bytes, Any] = {}
        self.expires: dict[bytes, int] = {}
        self.watchers: dict[bytes, set[Watcher]] = {}
        self._now_ms = now_ms
        self.on_expired: Callable[[Database, bytes], None] = lambda db, key: None
        # Told of every key created by set/rename while the new-key
        # notification class is on (None otherwise: one test per new key).
        self.on_new: Callable[[Database, bytes], None] | None = None
        self.expired_count = 0
        # While CLIENT PAUSE holds writes back, expiry (a write: it deletes and
        # propagates a DEL) waits too: a key past its deadline reads as missing
        # but stays until the pause ends, as in Redis.
        self.expiry_held = False
        # Keys a chunked MIGRATE is moving (engine/parking.py): not expired,
        # by the cron nor lazily, until the move ends (past their deadline
        # they read as missing meanwhile).
        self.moving: set[bytes] = set()
        self._deadlines: list[tuple[int, bytes]] = []  # heap of (when_ms, key)
        self.key_index = KeyIndex()        # buckets for SCAN
        self.access: dict[bytes, int] = {}  # key -> eviction marks (see the module's text)
        self.no_touch = False              # set while a CLIENT NO-TOUCH client runs a command
        # Told of every modified key while client-side caching is in use
        # (None otherwise: one test per modification).
        self.on_touch: Callable[[bytes], None] | None = None
        # The policy's kind (track): a lookup stamps the time (stamp_reads),
        # counts (lfu: an LFU policy) or leaves nothing (lrm: an LRM policy,
        # where writes stamp it).
        self.stamp_reads = True
        self.lfu: Lfu | None = None
        self.lrm = False
        # Hash field expiry (Redis 7.4): key -> the earliest field deadline
        # registered for the hash there, and a heap of (deadline, key); an
        # entry whose deadline no longer matches is stale.  Fields are also
        # expired lazily, whenever the hash is looked up.
        self.on_fields_expired: Callable[[Database, bytes, list[bytes]], None] = (
            lambda db, key, fields: None)
        self.field_keys: dict[bytes, int] = {}
        self._field_deadlines: list[tuple[int, bytes]] = []
        # TIDELOG.STAGE: streams arriving in chunks, token -> a
        # tidelog.rdb.staging.StagedCopy; beside the keys, never among them.
        self.staged: dict[bytes, Any] = {}

    def __len__(self) -> int:
        return len(self.data)

    # -- lookups ----------------------------------------------------------------
    def get(self, key: bytes) -> Any:
        """The live value at key, or None (expiring it first if due)."""
        if key in self.expires and self.expires[key] <= self._now_ms():
            self._expire(key)
            return None
        value = self.data.get(key)
        if type(value) is Hash and value.ttl:
            value = self._expire_fields(key, value, None)
        if value is not None and not self.no_touch:
            if self.stamp_reads:
                self.access[key] = self._now_ms()
            elif self.lfu is not None:
                self.access[key] = ~self.lfu.accessed(self._lfu_word(key), self._now_ms())
        return value

    def peek(self, key: bytes) -> Any:
        """Like :meth:`get` but leaves the access time alone (OBJECT, DEBUG)."""
        if key in self.expires and self.expires[key] <= self._now_ms():
            self._expire(key)
            return None
        value = self.data.get(key)
        if type(value) is Hash and value.ttl:
            value = self._expire_fields(key, value, None)
        return value

    def get_stream(self, key: bytes) -> Stream | None:
        """The stream at key, None if missing; WRONGTYPE for another type."""
        value = self.get(key)
        if value is None or type(value) is Stream:
            return value
        raise CommandError(WRONGTYPE)

    def get_typed(self, key: bytes, cls: type[T]) -> T | None:
        """The value of type ``cls`` at key, None if missing; WRONGTYPE for
        another type.  O(1)."""
        value = self.get(key)
        if value is None or type(value) is cls:
            return value
        raise CommandError(WRONGTYPE)

    def get_string(self, key: bytes) -> bytes | None:
        value = self.get(key)
        if value is None or type(value) is bytes:
            return value
        raise CommandError(WRONGTYPE)

    def exists(self, key: bytes) -> bool:
        return self.get(key) is not None

    # -- writes -------------------------------------------------------------------
    def set(self, key: bytes, value: Any, keep_ttl: bool = False) -> None:
        """Store a value; a plain SET clears the key's TTL unless keep_ttl.
        Under LFU a replaced value's counter stays with the key (the lookup
        before the write counted), as in Redis; a new key starts at 5."""
        if key not in self.data:
            self.key_index.add(key)
            if self.on_new is not None:
                self.data[key] = value
                self.on_new(self, key)
        self.data[key] = value
        if self.lfu is None:
            self.access[key] = self._now_ms()
        elif key not in self.access:
            self.access[key] = ~new_word(self._now_ms())
        if not keep_ttl:
            self.expires.pop(key, None)
        if type(value) is Hash and value.ttl:
            self.track_fields(key, value.next_deadline())
        self.touch(key)

    def delete(self, key: bytes) -> bool:
        """Remove a key (if live); True when something was removed."""
        if self.peek(key) is None:
            return False
        self._drop(key)
        self.touch(key)
        return True

    def _drop(self, key: bytes) -> None:
        """Forget a key present in ``data``: its value, deadline, SCAN bucket
        and access time (field deadlines go stale and are skipped)."""
        del self.data[key]
        self.expires.pop(key, None)
        self.key_index.discard(key)
        self.access.pop(key, None)

    def set_expire(self, key: bytes, when_ms: int) -> None:
        self.expires[key] = when_ms
        heapq.heappush(self._deadlines, (when_ms, key))
        self.touch(key)

    def persist(self, key: bytes) -> bool:
        if self.expires.pop(key, None) is None:
            return False
        self.touch(key)
        return True

    def ttl_ms(self, key: bytes) -> int | None:
        """Milliseconds to live; None when the key has no expiry."""
        when = self.expires.get(key)
        return None if when is None else max(0, when - self._now_ms())

    def flush(self) -> int:
        """Remove every key; returns how many there were.  O(N)."""
        count = len(self.data)
        removed = [key for key in self.watchers if key in self.data]
        self.data.clear()
        self.expires.clear()
        self._deadlines.clear()
        self.field_keys.clear()
        self._field_deadlines.clear()
        self.key_index.clear()
        self.access.clear()
        self.staged.clear()  # (the caller propagated their drops, if it must)
        for key in removed:
            self.touch_replaced(key, True)
        return count

    def rename(self, src: bytes, dst: bytes) -> None:
        """Move a value and its TTL; caller checked that src exists."""
        value = self.data.pop(src)
        when = self.expires.pop(src, None)
        self.key_index.discard(src)
        marks = self.access.pop(src, None)  # an LFU counter moves with the value
        self.access[dst] = marks if self.lfu is not None and marks is not None else self._now_ms()
        if dst not in self.data:
            self.key_index.add(dst)
        self.data[dst] = value
        if self.on_new is not None:  # a replaced destination counts as new, as in Redis
            self.on_new(self, dst)
        self.expires.pop(dst, None)
        if when is not None:  # (set_expire would signal dst before src: see below)
            self.expires[dst] = when
            heapq.heappush(self._deadlines, (when, dst))
        if type(value) is Hash and value.ttl:
            self.track_fields(dst, value.next_deadline())
        self.touch(src)
        self.touch(dst)

    def use_slot_index(self) -> SlotKeyIndex:
        """Cluster mode: keep the keys by hash slot too (a
        :class:`SlotKeyIndex` in place of the plain one, filed from the
        keys held now).  O(N)."""
        index = self.key_index
        if not isinstance(index, SlotKeyIndex):
            index = SlotKeyIndex()
            index.rebuild(self.data)
            self.key_index = index
        return index

    def swap_contents(self, other: Database) -> None:
        """SWAPDB: exchange every key, value, deadline (of keys and of hash
        fields) and access time with ``other``; each database keeps its index
        and its watchers.  O(1)."""
        for name in ("data", "expires", "_deadlines", "key_index", "access", "field_keys",
                     "_field_deadlines"):
            mine, theirs = getattr(self, name), getattr(other, name)
            setattr(self, name, theirs)
            setattr(other, name, mine)

    # -- WATCH ------------------------------------------------------------------------
    def is_expired(self, key: bytes) -> bool:
        """The key is still held but its deadline passed (not removed here)."""
        when = self.expires.get(key)
        return when is not None and when <= self._now_ms()

    def watch(self, key: bytes, watcher: Watcher) -> None:
        self.watchers.setdefault(key, set()).add(watcher)
        if key in self.data and self.is_expired(key):
            watcher.watched_expired.add((self.index, key))

    def unwatch(self, key: bytes, watcher: Watcher) -> None:
        watching = self.watchers.get(key)
        if watching is not None:
            watching.discard(watcher)
            if not watching:
                del self.watchers[key]

    def touch(self, key: bytes) -> None:
        """A key changed: transactions watching it will fail at EXEC, under
        LRM its modification time moves (:meth:`written`), and client-side
        caching hears of it (``on_touch``)."""
        watching = self.watchers.get(key)
        if watching:
            for watcher in watching:
                stale = watcher.watched_expired
                if stale and (self.index, key) in stale and key not in self.data:
                    stale.discard((self.index, key))  # expired when watched, now gone
                    continue
                watcher.dirty_cas = True
        if self.lrm and key in self.data:
            self.access[key] = self._now_ms()
        if self.on_touch is not None:
            self.on_touch(key)

    def touch_replaced(self, key: bytes, existed: bool) -> None:
        """FLUSHDB/SWAPDB replaced the database's contents: a watched key
        that ``existed`` before now holds what the new contents hold.  As
        Redis: nothing there before or after is no change; an expired key
        removed, or still expired, is none; a missing key replaced by an
        expired one becomes an expired one."""
        exists = key in self.data
        if not (existed or exists):
            return
        now_expired = exists and self.is_expired(key)
        mark = (self.index, key)
        for watcher in self.watchers.get(key, ()):
            stale = watcher.watched_expired
            if mark in stale:
                if not exists:
                    stale.discard(mark)
                    continue
                if now_expired:
                    continue
            elif not existed and now_expired:
                stale.add(mark)
                continue
            watcher.dirty_cas = True

    # -- eviction marks (the module's text) ---------------------------------------------
    def track(self, lfu: Lfu | None, lrm: bool) -> None:
        """The policy's kind from now on: ``lfu`` (the options in force)
        for an LFU policy, ``lrm`` for an LRM one, neither for the others.
        O(1): every key keeps its marks, read the new way."""
        self.lfu = lfu
        self.lrm = lrm
        self.stamp_reads = lfu is None and not lrm

    def accessed(self, key: bytes) -> None:
        """Mark an access as a lookup does (TOUCH by a CLIENT NO-TOUCH client)."""
        if self.stamp_reads:
            self.access[key] = self._now_ms()
        elif self.lfu is not None:
            self.access[key] = ~self.lfu.accessed(self._lfu_word(key), self._now_ms())

    def written(self, key: bytes) -> None:
        """The value at key changed without a WATCH signal (a stream's
        consumer groups): under LRM its modification time moves, as Redis
        8.6 moves it for every change of a key."""
        if self.lrm and key in self.data:
            self.access[key] = self._now_ms()

    def _lfu_word(self, key: bytes) -> int:
        """The key's field read as an LFU word (a time is read as its LRU
        clock, as Redis reads it after a switch to LFU)."""
        marks = self.access.get(key)
        if marks is None:
            return new_word(self._now_ms())
        return ~marks if marks < 0 else lru_clock(marks)

    def lru_field(self, key: bytes) -> int:
        """The 24 bits Redis would hold for the key (DEBUG OBJECT's lru)."""
        marks = self.access.get(key, self._now_ms())
        return ~marks if marks < 0 else lru_clock(marks)

    def idle_ms(self, key: bytes) -> int:
        """Time since the key's last access (under LRM: last write), which
        LRU and LRM eviction and OBJECT IDLETIME read; an LFU word left by
        an earlier policy is read as an LRU clock, as Redis reads it."""
        now = self._now_ms()
        marks = self.access.get(key, now)
        return max(0, now - marks) if marks >= 0 else clock_idle_ms(~marks, now)

    def frequency(self, key: bytes) -> int:
        """The key's decayed LFU counter (OBJECT FREQ, LFU eviction); only
        while an LFU policy is in force."""
        assert self.lfu is not None
        return self.lfu.counter(self._lfu_word(key), self._now_ms())

    def restore_marks(self, key: bytes, idle_s: int, freq: int) -> None:
        """RESTORE's IDLETIME (seconds, -1: none) or FREQ (-1: none): each
        applies only under the policies that keep it, as in Redis."""
        if self.lfu is not None:
            if freq >= 0:
                self.access[key] = ~word_of(freq, self._now_ms())
        elif idle_s >= 0:
            self.access[key] = self._now_ms() - idle_s * 1000

    # -- expiry ---------------------------------------------------------------------
    def _expire(self, key: bytes) -> None:
        if self.expiry_held or key in self.moving:  # logically gone; deleted once
            return                                   # the hold (or the move) ends
        self._drop(key)
        self.expired_count += 1
        self.touch(key)
        self.on_expired(self, key)

    def expire_cycle(self, budget: int = 200) -> int:
        """Active expiry: remove up to ``budget`` keys whose deadline passed.

        Deadlines sit in a heap, so a cycle costs O(k log N) for the k keys it
        looks at; entries made stale by PERSIST or a new deadline are dropped
        when they reach the top, and the heap is rebuilt when more than half
        of it is stale."""
        if self.expiry_held:
            return 0
        now = self._now_ms()
        heap = self._deadlines
        expired = 0
        kept: list[tuple[int, bytes]] = []
        while heap and heap[0][0] <= now and expired < budget:
            when, key = heapq.heappop(heap)
            if self.expires.get(key) == when:
                if key in self.moving:  # being moved: its deadline waits for the move's end
                    kept.append((when, key))
                    continue
                self._expire(key)
                expired += 1
        for item in kept:
            heapq.heappush(heap, item)
        if len(heap) > 2 * len(self.expires) + 64:
            self._deadlines = [(w, k) for k, w in self.expires.items()]
            heapq.heapify(self._deadlines)
        return expired

    # -- hash field expiry ---------------------------------------------------------------
    def track_fields(self, key: bytes, when_ms: int | None) -> None:
        """The hash at key has a field deadline ``when_ms``: have the active
        cycle visit it by then.  O(log H) for H hashes with TTLs."""
        if when_ms is None:
            return
        known = self.field_keys.get(key)
        if known is None or when_ms < known:
            self.field_keys[key] = when_ms
            heapq.heappush(self._field_deadlines, (when_ms, key))

    def _expire_fields(self, key: bytes, h: Hash, budget: int | None) -> Hash | None:
        """Remove the due fields of the hash at key (at most ``budget``),
        reporting them; the key goes with its last field.  The hash, or None
        when it was deleted.  O(k log T) for k expired fields.  While expiry
        is held (CLIENT PAUSE) the hash stays as it is and the fields due are
        left out of what is returned."""
        if self.expiry_held:
            return h.without_due(self._now_ms())
        fields = h.pop_expired(self._now_ms(), budget)
        if not fields:
            return h
        gone = not len(h)
        if gone:
            self._drop(key)
        self.touch(key)
        self.on_fields_expired(self, key, fields)
        return None if gone else h

    def field_expire_cycle(self, budget: int = 200) -> int:
        """Active field expiry: remove up to ``budget`` due hash fields.
        O(k log H) for k fields and hashes looked at."""
        if self.expiry_held:
            return 0
        now = self._now_ms()
        heap = self._field_deadlines
        expired = 0
        while heap and heap[0][0] <= now and expired < budget:
            when, key = heapq.heappop(heap)
            if self.field_keys.get(key) != when:
                continue
            del self.field_keys[key]
            h = self.data.get(key)
            if type(h) is not Hash or not h.ttl:
                continue
            before = len(h)
            left = self._expire_fields(key, h, budget - expired)
            expired += before - (len(left) if left is not None else 0)
            if left is not None:
                self.track_fields(key, left.next_deadline())
        if len(heap) > 2 * len(self.field_keys) + 64:
            self._field_deadlines = [(w, k) for k, w in self.field_keys.items()]
            heapq.heapify(self._field_deadlines)
        return expired

    def keys(self) -> Iterator[bytes]:
        """Live keys, expiring due ones on the way.  O(N)."""
        now = self._now_ms()
        for key in list(self.data):
            when = self.expires.get(key)
            if when is not None and when <= now:
                self._expire(key)
                continue
            yield key

    # -- SCAN -------------------------------------------------------------------------
    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One SCAN step: (next cursor, keys of the buckets visited).

        Visits buckets until ``count`` keys are collected, at most
        ``10 * count`` buckets, or the cursor wraps to 0.  Keys may be
        expired or filtered by the caller.  O(count) per call, amortised.
        """
        if len(self.key_index) != len(self.data):
            self.key_index.rebuild(self.data)  # a value was stored behind our back
        keys: list[bytes] = []
        budget = 10 * count
        while True:
            cursor, found = self.key_index.bucket(cursor)
            keys.extend(k for k in found if k in self.data)
            budget -= 1
            if cursor == 0 or budget <= 0 or len(keys) >= count:
                return cursor, keys


_MASK64 = (1 << 64) - 1
_REV8 = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def _reverse_bits(value: int, bits: int) -> int:
    """``value``'s low ``bits`` bits in reverse order."""
    return int.from_bytes(value.to_bytes(8, "little").translate(_REV8), "big") >> (64 - bits)


class KeyIndex:
    """Keys filed in ``2**bits`` buckets by hash: what makes SCAN's cursor work.

    The cursor is a bucket number, advanced in *reverse binary* order (the
    high bit of the bucket number is incremented first, as in Redis's
    ``dictScan``).  Because a bucket of a table of size ``2**b`` splits, when
    the table doubles, into buckets that follow each other in that order, a
    key present from the first SCAN call to the last is returned at least
    once even when the table grows or shrinks in between (it may then be
    returned twice); deleting other keys never moves a key to another
    bucket.  Hashes are Python's ``hash(bytes)``: stable for the life of the
    process, which is as long as a cursor means anything (as in Redis).

    The table keeps 1 to 8 keys per bucket on average; resizing refiles
    every key (O(N)), at most once per doubling or halving, so add and
    discard are O(1) amortised.  Buckets are sets, held in a dict by number
    so empty ones cost nothing.
    """

    __slots__ = ("bits", "buckets", "count")

    MIN_BITS = 2

    def __init__(self) -> None:
        self.bits = self.MIN_BITS
        self.buckets: dict[int, set[bytes]] = {}
        self.count = 0

    def __len__(self) -> int:
        return self.count

    @property
    def size(self) -> int:
        return 1 << self.bits

    def add(self, key: bytes) -> None:
        bucket = self.buckets.setdefault(hash(key) & (self.size - 1), set())
        if key not in bucket:
            bucket.add(key)
            self.count += 1
            if self.count > 8 * self.size:
                self._resize(self.bits + 1)

    def discard(self, key: bytes) -> None:
        number = hash(key) & (self.size - 1)
        bucket = self.buckets.get(number)
        if bucket is not None and key in bucket:
            bucket.discard(key)
            if not bucket:
                del self.buckets[number]
            self.count -= 1
            if self.bits > self.MIN_BITS and self.count < self.size // 2:
                self._resize(self.bits - 1)

    def clear(self) -> None:
        self.bits = self.MIN_BITS
        self.buckets = {}
        self.count = 0

    def rebuild(self, keys: Any) -> None:
        """Refile exactly ``keys`` (repairs the index; O(N))."""
        self.clear()
        for key in keys:
            self.add(key)

    def _resize(self, bits: int) -> None:
        keys = [k for bucket in self.buckets.values() for k in bucket]
        self.bits = bits
        mask = self.size - 1
        buckets: dict[int, set[bytes]] = {}
        for key in keys:
            buckets.setdefault(hash(key) & mask, set()).add(key)
        self.buckets = buckets

    def bucket(self, cursor: int) -> tuple[int, set[bytes] | tuple[()]]:
        """The keys in the cursor's bucket, and the cursor that follows it
        (0 once every bucket has been visited)."""
        bits = self.bits
        mask = (1 << bits) - 1
        number = cursor & mask
        found = self.buckets.get(number, ())
        step = _reverse_bits(number, bits) + 1
        following = 0 if step > mask else _reverse_bits(step, bits)
        return following, found


class SlotKeyIndex(KeyIndex):
    """The SCAN buckets plus, per hash slot, its keys (cluster mode's index:
    COUNTKEYSINSLOT in O(1), GETKEYSINSLOT in O(count), the keys of a slot
    to delete).  A slot's keys are a dict (insertion order, O(1) add and
    remove); a slot without keys has no entry.  Only a database in cluster
    mode has one (:meth:`Database.use_slot_index`): elsewhere adding and
    removing keys pays nothing for it."""

    __slots__ = ("slots",)

    def __init__(self) -> None:
        super().__init__()
        self.slots: dict[int, dict[bytes, None]] = {}

    def add(self, key: bytes) -> None:
        count = self.count
        super().add(key)
        if self.count != count:
            self.slots.setdefault(key_slot(key), {})[key] = None

    def discard(self, key: bytes) -> None:
        count = self.count
        super().discard(key)
        if self.count != count:
            slot = key_slot(key)
            keys = self.slots[slot]
            del keys[key]
            if not keys:
                del self.slots[slot]

    def clear(self) -> None:
        super().clear()
        self.slots = {}

    def count_in_slot(self, slot: int) -> int:
        """O(1)."""
        keys = self.slots.get(slot)
        return 0 if keys is None else len(keys)

    def keys_in_slot(self, slot: int, count: int) -> list[bytes]:
        """Up to ``count`` keys of ``slot``.  O(count)."""
        return list(islice(self.slots.get(slot, ()), count))
