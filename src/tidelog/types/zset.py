"""The sorted set type: members with a double score, ordered by (score, member).

One representation whatever the encoding: a dict member -> score and a
``SortedList`` of ``(score, member)`` pairs (sortedcontainers: a list of
sorted lists with a positional index), so every operation has the same cost
in both encodings.  The encoding is what OBJECT ENCODING reports, following
Redis's rules:

* ``listpack`` -- at most ``zset-max-listpack-entries`` members, none longer
  than ``zset-max-listpack-value`` bytes;
* ``skiplist`` -- anything else.  A sorted set never goes back to listpack
  (Redis converts one way only); only a value built whole (a STORE result,
  an RDB load) takes the smallest encoding that fits.

Members compare as bytes (memcmp), scores as doubles; -0.0 and 0.0 are the
same score.  NaN is never stored (the command layer refuses it).

Costs (N members): score lookup O(1); add, remove, rank, score or rank range
start O(log N); a range of M members O(log N + M); lexicographic range bounds
O(log^2 N) (a binary search over positions).  The limits are not read from
anywhere here (pure data): mutating methods take a :class:`ZSetLimits`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from sortedcontainers import SortedList

LISTPACK = b"listpack"
SKIPLIST = b"skiplist"


class ZSetLimits(NamedTuple):
    """The encoding thresholds (Redis's defaults)."""

    listpack_entries: int = 128   # zset-max-listpack-entries
    listpack_value: int = 64      # zset-max-listpack-value (bytes)

    def fits(self, count: int, longest: int) -> bool:
        return count <= self.listpack_entries and longest <= self.listpack_value


DEFAULT_LIMITS = ZSetLimits()


class LexBound(NamedTuple):
    """One end of a lexicographic range: ``-`` (value None, low), ``+``
    (value None, high), ``[x`` (inclusive) or ``(x`` (exclusive)."""

    value: bytes | None
    inclusive: bool = True
    infinite: int = 0  # -1 for "-", +1 for "+", else 0


class ZSet:
    """A Redis sorted set."""

    TYPE_NAME = b"zset"  # what TYPE says

    __slots__ = ("encoding", "_scores", "_order", "_items", "_pos")

    def __init__(self, encoding: bytes = LISTPACK) -> None:
        self.encoding = encoding
        self._scores: dict[bytes, float] = {}
        self._order: SortedList = SortedList()
        # For ZSCAN: the members in a list, removal swapping the last one into
        # the hole, and where each sits (O(1) to keep).
        self._items: list[bytes] = []
        self._pos: dict[bytes, int] = {}

    @classmethod
    def for_add(cls, first: bytes, limits: ZSetLimits) -> ZSet:
        """An empty sorted set for ZADD or ZINCRBY whose first member is
        ``first``, as redis-server 7.0.15 creates one: skiplist when
        zset-max-listpack-entries is 0 or ``first`` is longer than
        zset-max-listpack-value, else listpack (the adds that follow may
        convert it).  O(1)."""
        return cls(LISTPACK if limits.fits(1, len(first)) else SKIPLIST)

    @classmethod
    def built(cls, pairs: Iterable[tuple[bytes, float]], limits: ZSetLimits) -> ZSet:
        """A sorted set holding ``pairs`` (member, score; a later pair for a
        member wins) in the smallest encoding that fits, as Redis leaves a
        computed (STORE) or loaded value.  O(N log N)."""
        z = cls(SKIPLIST)
        for member, score in pairs:
            z.add(member, score, limits)
        z.shrink(limits)
        return z

    def shrink(self, limits: ZSetLimits) -> None:
        """Take the listpack encoding if the value fits it.  O(N)."""
        if self.encoding is SKIPLIST and limits.fits(
                len(self._scores), max(map(len, self._scores), default=0)):
            self.encoding = LISTPACK
            for member, score in self._scores.items():
                if score == 0 and math.copysign(1, score) < 0:
                    self._order.remove((score, member))
                    self._scores[member] = 0.0
                    self._order.add((0.0, member))

    # -- reading ------------------------------------------------------------------
    def object_encoding(self) -> bytes:
        return self.encoding

    def __len__(self) -> int:
        return len(self._scores)

    def __contains__(self, member: bytes) -> bool:
        return member in self._scores

    def score(self, member: bytes) -> float | None:
        return self._scores.get(member)

    def rank(self, member: bytes) -> int | None:
        """The member's 0-based position in ascending order, or None.  O(log N)."""
        score = self._scores.get(member)
        if score is None:
            return None
        return self._order.index((score, member))

    def at(self, index: int) -> tuple[bytes, float]:
        """(member, score) at ascending position ``index`` (0 <= index < N)."""
        score, member = self._order[index]
        return member, score

    def slice(self, start: int, stop: int, reverse: bool = False) -> list[tuple[bytes, float]]:
        """Ascending positions ``start`` .. ``stop - 1`` as (member, score),
        in descending order when ``reverse``.  O(log N + M)."""
        items = self._order.islice(start, stop, reverse=reverse)
        return [(m, s) for s, m in items]

    def copy(self) -> ZSet:
        """An independent sorted set with the same members, scores and
        encoding (COPY).  O(N)."""
        other = ZSet(self.encoding)
        other._scores = dict(self._scores)
        other._order = SortedList(self._order)
        other._items = list(self._items)
        other._pos = dict(self._pos)
        return other

    def items(self) -> list[tuple[bytes, float]]:
        """Every (member, score), ascending.  O(N)."""
        return [(m, s) for s, m in self._order]

    def __iter__(self) -> Iterator[bytes]:
        return (m for _, m in self._order)

    # -- score and lexicographic bounds as positions --------------------------------
    def score_index(self, score: float, exclusive: bool, upper: bool) -> int:
        """The position range bound of a score bound.  As a lower bound: the
        first position whose score is >= ``score`` (> when ``exclusive``).  As
        an upper bound: one past the last position whose score is <= (<) it.
        O(log N)."""
        # (s, b"") sorts before every member of score s (b"" is the least bytes).
        if upper != exclusive:  # upper inclusive or lower exclusive: past every s
            if score == math.inf:
                return len(self._order)
            score = math.nextafter(score, math.inf)
        return self._order.bisect_left((score, b""))

    def lex_index(self, bound: LexBound, upper: bool) -> int:
        """A lexicographic bound as a position, the set taken as ordered by
        member (true when every score is equal; Redis leaves the rest
        unspecified).  Lower: the first member >= (>) the value; upper: one
        past the last member <= (<) it.  O(log^2 N)."""
        n = len(self._order)
        if bound.infinite:
            return 0 if bound.infinite < 0 else n
        value = bound.value
        after = upper == bound.inclusive  # the first member > value, else >= value
        lo, hi = 0, n
        order = self._order
        while lo < hi:
            mid = (lo + hi) // 2
            member = order[mid][1]
            if member < value or (after and member == value):
                lo = mid + 1
            else:
                hi = mid
        return lo

    # -- writing --------------------------------------------------------------------
    def add(self, member: bytes, score: float, limits: ZSetLimits = DEFAULT_LIMITS) -> bool:
        """Set the member's score; True if the member is new.  A listpack that
        would pass a limit becomes a skiplist first.  O(log N)."""
        old = self._scores.get(member)
        if self.encoding is LISTPACK:
            if old is None and (len(self._scores) + 1 > limits.listpack_entries
                                or len(member) > limits.listpack_value):
                self.encoding = SKIPLIST
            else:
                score += 0.0  # a listpack keeps a score as text without the sign of -0
        if old is None:
            self._scores[member] = score
            self._order.add((score, member))
            self._pos[member] = len(self._items)
            self._items.append(member)
            return True
        if old != score:  # (-0.0 and 0.0 are the same score: no update)
            self._order.remove((old, member))
            self._scores[member] = score
            self._order.add((score, member))
        return False

    def remove(self, member: bytes) -> bool:
        """Remove the member; False if it was absent.  O(log N)."""
        score = self._scores.pop(member, None)
        if score is None:
            return False
        self._order.remove((score, member))
        self._unlist(member)
        return True

    def _unlist(self, member: bytes) -> None:
        items, pos = self._items, self._pos
        at = pos.pop(member)
        last = items.pop()
        if at < len(items):
            items[at] = last
            pos[last] = at

    def remove_positions(self, start: int, stop: int) -> list[tuple[bytes, float]]:
        """Remove ascending positions ``start`` .. ``stop - 1`` and return them
        as (member, score).  O(log N + M)."""
        if start >= stop:
            return []
        taken = list(self._order.islice(start, stop))
        del self._order[start:stop]
        scores = self._scores
        for _, member in taken:
            del scores[member]
            self._unlist(member)
        return [(m, s) for s, m in taken]

    def pop(self, count: int, highest: bool) -> list[tuple[bytes, float]]:
        """Remove and return up to ``count`` members from the low end (or the
        high end when ``highest``: highest first).  O(log N + count)."""
        n = len(self._order)
        count = min(count, n)
        if highest:
            return self.remove_positions(n - count, n)[::-1]
        return self.remove_positions(0, count)

    # -- random members ---------------------------------------------------------------
    def random_distinct(self, count: int, rng: random.Random | None = None
                        ) -> list[tuple[bytes, float]]:
        """``count`` (< N) distinct random members.  O(count log N)."""
        r = rng or random
        return [self.at(i) for i in r.sample(range(len(self._order)), count)]

    def random_with_repeats(self, count: int, rng: random.Random | None = None
                            ) -> list[tuple[bytes, float]]:
        r = rng or random
        n = len(self._order)
        return [self.at(r.randrange(n)) for _ in range(count)]

    # -- ZSCAN ----------------------------------------------------------------------------
    def scan(self, cursor: int, count: int) -> tuple[int, list[tuple[bytes, float]]]:
        """One ZSCAN step: (next cursor, (member, score) pairs).  A listpack
        answers whole, cursor 0, as Redis does.  A skiplist is walked down
        its member list: cursor 0 starts at the end, cursor ``p`` continues
        below position ``p``.  Removal moves only the last member (into the
        hole) and additions go at the end, so a member present for the whole
        iteration is returned at least once (perhaps twice), Redis's
        guarantee.  O(count)."""
        if self.encoding is LISTPACK:
            return 0, self.items()
        items = self._items
        top = len(items) if cursor == 0 else min(cursor, len(items))
        low = max(0, top - count)
        scores = self._scores
        return low, [(m, scores[m]) for m in reversed(items[low:top])]

    # -- checks (tests) -----------------------------------------------------------------
    def check(self, limits: ZSetLimits = DEFAULT_LIMITS) -> None:
        """Assert the representation's invariants.  O(N)."""
        order = self._order
        assert len(order) == len(self._scores)
        for score, member in order:
            assert self._scores[member] == score and not math.isnan(score)
        assert all(order[i] < order[i + 1] for i in range(len(order) - 1))
        assert len(self._items) == len(self._pos) == len(order)
        assert all(self._pos[m] == i for i, m in enumerate(self._items))
        assert self.encoding in (LISTPACK, SKIPLIST)
        if self.encoding is LISTPACK:
            assert len(order) <= limits.listpack_entries
            assert all(len(m) <= limits.listpack_value for m in self._scores)

    def memory_usage(self) -> int:
        """An estimate of what Redis would use for this value (bytes)."""
        if self.encoding is LISTPACK:
            return 16 + 7 + sum(len(m) + 12 for m in self._scores)
        return 16 + 64 + sum(len(m) + 80 for m in self._scores)
