"""The set type, in Redis's three encodings (what OBJECT ENCODING reports).

* ``intset`` -- every member a canonical signed 64-bit decimal integer and at
  most ``set-max-intset-entries`` of them: a sorted list of Python ints.
  Members come out in numeric order, as Redis's intset gives them.
* ``listpack`` (Redis 7.2+) -- at most ``set-max-listpack-entries`` members,
  none longer than ``set-max-listpack-value`` bytes: a list of bytes in
  insertion order (a removal keeps the order of the rest), as a listpack.
* ``hashtable`` -- anything else: a list of the members and a dict member ->
  position in it, removal by swapping the last member into the hole, so a
  random member is O(1).  The order is ours, not Redis's hash order.

Conversions go one way, as in Redis: intset -> listpack (a member that is not
an integer, while the set stays small) or -> hashtable; listpack ->
hashtable.  A set never goes back to a smaller encoding.

The limits are not read from anywhere here (this module is pure data): every
mutating method takes a :class:`SetLimits`, which the command layer builds
from the configuration.

Costs (N members): membership O(log N) intset, O(N) listpack, O(1)
hashtable; add/remove O(N) intset and listpack (Redis's memmove), O(1)
hashtable; a conversion O(N), once.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import NamedTuple

INTSET = b"intset"
LISTPACK = b"listpack"
HASHTABLE = b"hashtable"

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# Redis caps an intset at 2**30 entries whatever set-max-intset-entries says.
_INTSET_HARD_MAX = 1 << 30


class SetLimits(NamedTuple):
    """The encoding thresholds (Redis's defaults)."""

    intset_entries: int = 512      # set-max-intset-entries
    listpack_entries: int = 128    # set-max-listpack-entries
    listpack_value: int = 64       # set-max-listpack-value (bytes)

    @property
    def intset_max(self) -> int:
        return min(self.intset_entries, _INTSET_HARD_MAX)


DEFAULT_LIMITS = SetLimits()


def as_int64(member: bytes) -> int | None:
    """The member as an intset holds it: a canonical signed 64-bit decimal
    (no sign but a leading ``-``, no leading zero, no ``-0``), else None.
    O(len)."""
    n = len(member)
    if n == 0 or n > 20:
        return None
    if member.isdigit():
        if n > 1 and member[0] == 0x30:
            return None
    elif not (n > 1 and member[0] == 0x2D and member[1] != 0x30 and member[1:].isdigit()):
        return None
    value = int(member)
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    return None


class Set:
    """A Redis set.  ``members()`` yields bytes in the encoding's order."""

    TYPE_NAME = b"set"  # what TYPE says

    __slots__ = ("encoding", "_ints", "_lp", "_items", "_pos")

    def __init__(self) -> None:
        self.encoding = INTSET
        self._ints: list[int] = []             # intset: sorted
        self._lp: list[bytes] = []             # listpack: insertion order
        self._items: list[bytes] = []          # hashtable: members ...
        self._pos: dict[bytes, int] = {}       # ... and where each sits in _items

    @classmethod
    def for_first(cls, member: bytes, size_hint: int, limits: SetLimits) -> Set:
        """An empty set made for ``size_hint`` additions starting with
        ``member``, encoded as Redis 7.2+ creates one (SADD passes its member
        count, duplicates included; SMOVE and the STORE commands 1): intset
        if ``member`` is an integer and the hint fits an intset, else
        listpack if the hint fits one, else hashtable.  O(1)."""
        s = cls()
        if as_int64(member) is not None and size_hint <= limits.intset_max:
            return s
        s.encoding = LISTPACK if size_hint <= limits.listpack_entries else HASHTABLE
        return s

    # -- reading ------------------------------------------------------------------
    def object_encoding(self) -> bytes:
        return self.encoding

    def __len__(self) -> int:
        enc = self.encoding
        if enc is HASHTABLE:
            return len(self._items)
        return len(self._ints) if enc is INTSET else len(self._lp)

    def __contains__(self, member: bytes) -> bool:
        enc = self.encoding
        if enc is HASHTABLE:
            return member in self._pos
        if enc is LISTPACK:
            return member in self._lp
        value = as_int64(member)
        if value is None:
            return False
        ints = self._ints
        i = bisect_left(ints, value)
        return i < len(ints) and ints[i] == value

    def members(self) -> list[bytes]:
        """Every member: intset numerically, listpack in insertion order,
        hashtable in our order.  O(N)."""
        enc = self.encoding
        if enc is HASHTABLE:
            return list(self._items)
        if enc is LISTPACK:
            return list(self._lp)
        return [b"%d" % i for i in self._ints]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members())

    def copy(self) -> Set:
        """An independent set with the same members, encoding and order
        (COPY).  O(N)."""
        other = Set()
        other.encoding = self.encoding
        other._ints = list(self._ints)
        other._lp = list(self._lp)
        other._items = list(self._items)
        other._pos = dict(self._pos)
        return other

    def ints(self) -> list[int]:
        """An intset's integers, sorted (the RDB intset encoding). O(N)."""
        assert self.encoding is INTSET
        return list(self._ints)

    # -- writing ------------------------------------------------------------------
    def add(self, member: bytes, limits: SetLimits = DEFAULT_LIMITS) -> bool:
        """Add one member; True when it was new.  Converts as Redis 7.2+ does."""
        enc = self.encoding
        if enc is HASHTABLE:
            pos = self._pos
            if member in pos:
                return False
            pos[member] = len(self._items)
            self._items.append(member)
            return True
        if enc is LISTPACK:
            lp = self._lp
            if member in lp:
                return False
            if len(lp) < limits.listpack_entries and len(member) <= limits.listpack_value:
                lp.append(member)
                return True
            self._to_hashtable()
            return self.add(member, limits)
        value = as_int64(member)
        ints = self._ints
        if value is not None:
            i = bisect_left(ints, value)
            if i < len(ints) and ints[i] == value:
                return False
            ints.insert(i, value)
            if len(ints) > limits.intset_max:
                self._to_hashtable()
            return True
        # Not an integer: a listpack if the set stays small and every member
        # (the intset's longest is its min or max, as text) fits one.
        longest = max(len(b"%d" % ints[0]), len(b"%d" % ints[-1])) if ints else 0
        if (len(ints) < limits.listpack_entries and len(member) <= limits.listpack_value
                and longest <= limits.listpack_value):
            self._to_listpack()
            self._lp.append(member)
        else:
            self._to_hashtable()
            self.add(member, limits)
        return True

    def add_many(self, members: Iterable[bytes], limits: SetLimits = DEFAULT_LIMITS) -> int:
        """Add each member in turn; the number that were new."""
        add = self.add
        return sum(1 for m in members if add(m, limits))

    def prepare(self, size_hint: int, limits: SetLimits) -> None:
        """Before adding ``size_hint`` members to an existing set: a
        listpack or intset that the hint alone overflows becomes a hashtable
        at once (Redis 7.2+'s SADD does this, counting duplicates).  O(N)
        when it converts."""
        if ((self.encoding is LISTPACK and size_hint > limits.listpack_entries)
                or (self.encoding is INTSET and size_hint > limits.intset_max)):
            self._to_hashtable()

    def remove(self, member: bytes) -> bool:
        """Remove one member; True when it was there."""
        enc = self.encoding
        if enc is HASHTABLE:
            pos = self._pos.pop(member, None)
            if pos is None:
                return False
            items = self._items
            last = items.pop()
            if pos < len(items):
                items[pos] = last
                self._pos[last] = pos
            return True
        if enc is LISTPACK:
            try:
                self._lp.remove(member)
            except ValueError:
                return False
            return True
        value = as_int64(member)
        if value is None:
            return False
        ints = self._ints
        i = bisect_left(ints, value)
        if i < len(ints) and ints[i] == value:
            del ints[i]
            return True
        return False

    def _to_listpack(self) -> None:
        self._lp = [b"%d" % i for i in self._ints]
        self._ints = []
        self.encoding = LISTPACK

    def _to_hashtable(self) -> None:
        items = self.members()
        self._ints, self._lp = [], []
        self._items = items
        self._pos = {m: i for i, m in enumerate(items)}
        self.encoding = HASHTABLE

    # -- random members -----------------------------------------------------------
    def _at(self, i: int) -> bytes:
        enc = self.encoding
        if enc is HASHTABLE:
            return self._items[i]
        return self._lp[i] if enc is LISTPACK else b"%d" % self._ints[i]

    def random_member(self, rng: random.Random | None = None) -> bytes:
        """One member chosen uniformly (the set is not empty).  O(1)."""
        r = rng or random
        return self._at(r.randrange(len(self)))

    def random_distinct(self, count: int, rng: random.Random | None = None) -> list[bytes]:
        """``count`` distinct members (count <= len), uniformly.  O(count)."""
        r = rng or random
        return [self._at(i) for i in r.sample(range(len(self)), count)]

    def random_with_repeats(self, count: int, rng: random.Random | None = None) -> list[bytes]:
        """``count`` members, each chosen independently.  O(count)."""
        r = rng or random
        n = len(self)
        at = self._at
        return [at(r.randrange(n)) for _ in range(count)]

    # -- SSCAN --------------------------------------------------------------------
    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One SSCAN step: (next cursor, members).  Intset and listpack sets
        answer whole, cursor 0, as Redis does.  A hashtable is walked from
        its last position down: cursor 0 starts at the end, cursor ``p``
        continues below position ``p``.  Removal moves only the last member
        (into the hole), and additions go at the end, so a member present
        for the whole iteration is returned at least once (perhaps twice),
        Redis's guarantee.  O(count)."""
        if self.encoding is not HASHTABLE:
            return 0, self.members()
        items = self._items
        top = len(items) if cursor == 0 else min(cursor, len(items))
        low = max(0, top - count)
        return low, items[low:top][::-1]

    # -- checks (tests) -----------------------------------------------------------
    def check(self, limits: SetLimits = DEFAULT_LIMITS) -> None:
        """Assert the representation's invariants.  O(N)."""
        enc = self.encoding
        if enc is INTSET:
            ints = self._ints
            assert all(ints[i] < ints[i + 1] for i in range(len(ints) - 1))
            assert all(_INT64_MIN <= i <= _INT64_MAX for i in ints)
            assert len(ints) <= limits.intset_max
            assert not self._lp and not self._items and not self._pos
        elif enc is LISTPACK:
            assert len(set(self._lp)) == len(self._lp)
            assert not self._ints and not self._items and not self._pos
        else:
            assert enc is HASHTABLE
            assert len(self._items) == len(self._pos)
            assert all(self._pos[m] == i for i, m in enumerate(self._items))
            assert not self._ints and not self._lp

    def memory_usage(self) -> int:
        """An estimate of what Redis would use for this value (bytes)."""
        enc = self.encoding
        if enc is INTSET:
            width = 2
            if self._ints:
                big = max(-self._ints[0], self._ints[-1])
                width = 2 if big < 1 << 15 else 4 if big < 1 << 31 else 8
            return 16 + 8 + width * len(self._ints)
        if enc is LISTPACK:
            return 16 + 7 + sum(len(m) + 2 for m in self._lp)
        return 16 + 64 + sum(len(m) + 40 for m in self._items)
