"""Redis lists: a sequence of byte strings, pushed and popped at both ends.

A :class:`List` keeps its elements in a ``collections.deque`` (O(1) at both
ends, O(n) towards the middle, as Redis's quicklist is in practice), and the
size in bytes the same elements take as one Redis listpack, so that OBJECT
ENCODING answers what Redis 7.2+ answers:

* ``listpack`` while the list fits one quicklist node's limit, which is the
  ``list-max-listpack-size`` option (``fill``): a negative fill -1..-5 is a
  node size of 4, 8, 16, 32 or 64 KB (-2, the default: 8 KB; below -5 counts
  as -5), a positive fill is that many elements (and at most 8 KB).  Before a
  push, Redis checks the listpack's bytes plus the new elements' lengths
  against that limit and converts to ``quicklist`` when they would exceed it.
* ``quicklist`` otherwise.  Since 7.2 a quicklist turns back into a
  listpack after a removal, when it is one node of at most half the limit
  (half the size, and half the count for a positive fill), so that a list
  hovering at the limit does not flip at every push and pop.  We have no
  nodes: we take "one node" to mean "the whole list fits one node's size
  limit", which is what a list of that size is after Redis's merges in the
  common case (pushes and pops at the ends).

(https://redis.io/commands/object-encoding/ names the encodings;
https://redis.io/docs/latest/operate/oss_and_stack/management/config-file/
documents ``list-max-listpack-size``; the listpack encoding and the
one-node-at-half rule came with Redis 7.2,
https://github.com/redis/redis/pull/11303.)  LSET and LINSERT count as
adding one element, as in Redis.

Elements are plain ``bytes``.  Indexes follow Redis: 0 is the head, -1 the
tail.  Nothing here imports commands, the keyspace or the engine.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

from . import listpack

# Node size limits for fill -1 .. -5 (Redis's quicklist optimisation levels).
_NODE_SIZES = (4096, 8192, 16384, 32768, 65536)
# The most bytes a node may hold with a positive (element count) fill.
SIZE_SAFETY_LIMIT = 8192
_EMPTY_LISTPACK = listpack.HEADER_SIZE + 1  # header + terminator


def node_limits(fill: int) -> tuple[int, float]:
    """(size limit in bytes, count limit) of one node for a fill value. O(1)."""
    if fill >= 0:
        return SIZE_SAFETY_LIMIT, fill
    level = min(-fill, len(_NODE_SIZES)) - 1
    return _NODE_SIZES[level], float("inf")


def entry_size(value: bytes) -> int:
    """The bytes ``value`` takes as one listpack element (with backlen).
    O(1) for long values, O(len) below 64 bytes."""
    n = len(value)
    if n < 64:
        return len(listpack.encode_string(value))
    if n < 4096:
        return 2 + n + listpack.backlen_size(n + 2)
    return 5 + n + listpack.backlen_size(n + 5)


class List:
    """A Redis list.  ``items`` is the deque of elements (head first);
    ``lp_bytes`` the size of the same elements as one listpack; ``quick``
    whether OBJECT ENCODING says quicklist.

    Mutators take ``fill`` (the ``list-max-listpack-size`` option) to apply
    the encoding rules.  Removals never leave the list empty without the
    caller seeing it (``len(lst) == 0``): the command deletes the key.
    """

    TYPE_NAME = b"list"
    __slots__ = ("items", "lp_bytes", "quick")

    def __init__(self, items: Iterable[bytes] = (), fill: int = -2) -> None:
        self.items: deque[bytes] = deque()
        self.lp_bytes = _EMPTY_LISTPACK
        self.quick = False
        self.push(list(items), False, fill)

    # -- reading ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.items)

    def __repr__(self) -> str:
        return f"<List len={len(self.items)} {self.object_encoding().decode()}>"

    def object_encoding(self) -> bytes:
        """What OBJECT ENCODING says. O(1)."""
        return b"quicklist" if self.quick else b"listpack"

    def copy(self) -> List:
        """An independent list with the same elements and encoding (COPY).  O(N)."""
        other = List.__new__(List)
        other.items = deque(self.items)
        other.lp_bytes = self.lp_bytes
        other.quick = self.quick
        return other

    def index(self, i: int) -> bytes | None:
        """The element at index ``i`` (negative from the tail), None when out
        of range. O(min(i, n - i))."""
        n = len(self.items)
        if i < 0:
            i += n
        if 0 <= i < n:
            return self.items[i]
        return None

    def range(self, start: int, stop: int) -> list[bytes]:
        """LRANGE's elements: indexes inclusive, negative from the tail,
        clamped. O(start + count) (from the nearer end)."""
        bounds = self.clamp(start, stop)
        if bounds is None:
            return []
        lo, hi = bounds
        items = self.items
        n = len(items)
        if lo == 0 and hi == n - 1:
            return list(items)
        if n - 1 - hi < lo:  # nearer the tail: walk from it
            out = []
            it = reversed(items)
            for _ in range(n - 1 - hi):
                next(it)
            for _ in range(hi - lo + 1):
                out.append(next(it))
            out.reverse()
            return out
        it = iter(items)
        for _ in range(lo):
            next(it)
        return [next(it) for _ in range(hi - lo + 1)]

    def clamp(self, start: int, stop: int) -> tuple[int, int] | None:
        """Redis's range rule: negative indexes from the tail, start below 0
        is 0, stop past the end is the last; None when the range is empty."""
        n = len(self.items)
        if start < 0:
            start += n
        if stop < 0:
            stop += n
        if start < 0:
            start = 0
        if start > stop or start >= n:
            return None
        if stop >= n:
            stop = n - 1
        return start, stop

    def positions(self, value: bytes, rank: int, count: int, maxlen: int) -> list[int]:
        """LPOS: the indexes of matches, starting at the ``rank``-th match
        (negative: from the tail), at most ``count`` (0: all), looking at
        most ``maxlen`` elements (0: all). O(n) at worst."""
        items = self.items
        n = len(items)
        out: list[int] = []
        skip = abs(rank) - 1
        limit = n if maxlen == 0 else min(maxlen, n)
        if rank > 0:
            seq: Iterable[tuple[int, bytes]] = enumerate(items)
        else:
            seq = zip(range(n - 1, -1, -1), reversed(items))
        seen = 0
        for i, item in seq:
            if seen >= limit:
                break
            seen += 1
            if item == value:
                if skip:
                    skip -= 1
                    continue
                out.append(i)
                if count and len(out) >= count:
                    break
        return out

    # -- encoding bookkeeping ---------------------------------------------------
    def _grow(self, values: list[bytes], fill: int) -> None:
        """Before adding ``values``: Redis's listpack-to-quicklist check (the
        listpack's bytes plus the raw lengths of what is added). O(len(values))."""
        if self.quick:
            return
        size_limit, count_limit = node_limits(fill)
        if self.lp_bytes + sum(len(v) for v in values) > size_limit or \
                len(self.items) + len(values) > count_limit:
            self.quick = True

    def _shrunk(self, fill: int) -> None:
        """After a removal: a quicklist of one small node turns back into a
        listpack (half the limits). O(1)."""
        if not self.quick:
            return
        size_limit, count_limit = node_limits(fill)
        if self.lp_bytes <= size_limit // 2 and len(self.items) <= count_limit / 2:
            self.quick = False

    # -- writing ------------------------------------------------------------------
    def push(self, values: list[bytes], left: bool, fill: int) -> int:
        """LPUSH (``left``: each value in turn at the head) or RPUSH; returns
        the new length. O(len(values))."""
        self._grow(values, fill)
        self.lp_bytes += sum(entry_size(v) for v in values)
        if left:
            self.items.extendleft(values)
        else:
            self.items.extend(values)
        return len(self.items)

    def pop(self, left: bool, fill: int) -> bytes:
        """Remove and return the head (``left``) or tail element; the list
        must not be empty. O(1)."""
        value = self.items.popleft() if left else self.items.pop()
        self.lp_bytes -= entry_size(value)
        self._shrunk(fill)
        return value

    def pop_many(self, count: int, left: bool, fill: int) -> list[bytes]:
        """Remove and return up to ``count`` elements from one end, in pop
        order. O(count)."""
        items = self.items
        take = items.popleft if left else items.pop
        out = [take() for _ in range(min(count, len(items)))]
        self.lp_bytes -= sum(entry_size(v) for v in out)
        self._shrunk(fill)
        return out

    def set(self, i: int, value: bytes, fill: int) -> bool:
        """LSET: replace the element at index ``i``; False when out of range.
        O(min(i, n - i))."""
        n = len(self.items)
        if i < 0:
            i += n
        if not 0 <= i < n:
            return False
        old = self.items[i]
        self._grow([value], fill)
        self.items[i] = value
        self.lp_bytes += entry_size(value) - entry_size(old)
        self._shrunk(fill)
        return True

    def insert(self, pivot: bytes, value: bytes, before: bool, fill: int) -> int:
        """LINSERT: put ``value`` before or after the first ``pivot``; the new
        length, or -1 when there is no pivot. O(n)."""
        try:
            i = self.items.index(pivot)
        except ValueError:
            return -1
        self._grow([value], fill)
        self.items.insert(i if before else i + 1, value)
        self.lp_bytes += entry_size(value)
        return len(self.items)

    def remove(self, count: int, value: bytes, fill: int) -> int:
        """LREM: remove the first ``count`` occurrences of ``value`` (count < 0:
        the last ones; 0: all); returns how many went. O(n)."""
        items = self.items
        if value not in items:
            return 0
        limit = abs(count) or len(items)
        removed = 0
        if count >= 0:
            kept: list[bytes] = []
            for item in items:
                if removed < limit and item == value:
                    removed += 1
                else:
                    kept.append(item)
            self.items = deque(kept)
        else:
            kept = []
            for item in reversed(items):
                if removed < limit and item == value:
                    removed += 1
                else:
                    kept.append(item)
            kept.reverse()
            self.items = deque(kept)
        self.lp_bytes -= removed * entry_size(value)
        self._shrunk(fill)
        return removed

    def trim(self, start: int, stop: int, fill: int) -> int:
        """LTRIM: keep only the elements from ``start`` to ``stop`` (Redis's
        range rule); returns how many were removed. O(removed)."""
        items = self.items
        n = len(items)
        bounds = self.clamp(start, stop)
        if bounds is None:
            lo, hi = 0, -1  # everything goes
        else:
            lo, hi = bounds
        removed = 0
        for _ in range(lo):
            self.lp_bytes -= entry_size(items.popleft())
            removed += 1
        for _ in range(n - 1 - hi if bounds is not None else len(items)):
            self.lp_bytes -= entry_size(items.pop())
            removed += 1
        if removed:
            self._shrunk(fill)
        return removed

    # -- checks (tests) -------------------------------------------------------------
    def check(self, fill: int) -> None:
        """Assert the invariants: every element is bytes, ``lp_bytes`` is the
        exact size of the elements as one listpack, and a list that is a
        listpack fits one node. O(n) (builds the listpack)."""
        for item in self.items:
            assert type(item) is bytes, item
        assert self.lp_bytes == len(listpack.pack(self.items)), \
            (self.lp_bytes, len(listpack.pack(self.items)))
        if not self.quick:
            size_limit, count_limit = node_limits(fill)
            assert len(self.items) <= count_limit
            assert self.lp_bytes <= size_limit + sum(len(v) for v in self.items)
