"""Sorted indexes for the pending entries lists, tuned for queue-like use.

A consumer group keeps each pending entry in three ordered structures (see
:mod:`tidelog.types.groups`): the group's PEL and its owner's PEL, both by
ID, and the time index, by ``(delivery_time, id)``.  Their traffic is that of
a queue: XREADGROUP adds IDs in increasing order at non-decreasing times, and
XACK removes them mostly in the order they were delivered, near the front.
Out-of-order changes happen (XGROUP SETID back, XCLAIM with FORCE, TIME or
IDLE, XNACK's time 0, acks out of order) but are rare.  A balanced tree (or
sortedcontainers, about 0.5 us of Python per update) pays for generality this
traffic does not need; here the common cases are one or two C operations:

:class:`SortedIndex`
    A dict (membership and values, C speed) that also keeps its keys in a
    sorted Python list, for ordered iteration and range scans.
:class:`SortedKeys`
    The same sorted list without values, as a set of comparable keys (the
    time index's ``(delivery_time, id)`` pairs).

The sorted list ``_keys`` has three parts::

    _keys   [ k1  k2 | k3  k4  k5  k6  k7 ]      _lo = 2, _dead = {k5}
              retired  live  ^^  dead  live

- an insert above the last key is an append, O(1); a key re-added while it
  is dead leaves ``_dead`` (its slot is still in place), O(1); any other
  insert is a binary search, O(log n), plus a C ``memmove`` of the keys
  after the insertion point, O(distance from the end) - but only up to
  ``FLAT_INSERT_MAX`` keys (see below);
- removing the first live key moves ``_lo`` past it (and past any dead keys
  that follow), removing the last pops it: O(1) amortised.  The retired
  prefix ``_keys[:_lo]`` is cut off (one ``memmove``) once it is more than
  half the list;
- removing any other key only marks it dead, O(1); once dead keys are more
  than half of ``_keys[_lo:]`` the list is rebuilt without them, O(n), so
  O(1) amortised per removal;
- scans bisect the list, O(log n), and skip dead keys as they go.

So the first and last live keys are always at ``_keys[_lo]`` and
``_keys[-1]``, and a scan passes over at most as many dead keys as live
ones in the whole index.  An emptied index drops its list.

Iterators from ``irange`` are views of the list, as sortedcontainers' are:
they must not be used after the index changes.  The group's scans, which
must tolerate changes between the records they yield, fetch keys in
batches and re-seek by key after each batch (``groups._walk``).

The price of a flat list is the insert out of order: a ``memmove`` of the
list after the insertion point, about 9 us per 100,000 keys moved, where a
tree pays O(log n).  So the flat list takes such an insert only when it
lands at most ``FLAT_INSERT_MAX`` positions before the end of the list (a
memmove of well under a microsecond).  An insert that would land further
back converts the index, once and for good, to the sortedcontainers
structure, built from its live keys (a sorted input, so O(n)): a
``SortedDict`` for :class:`SortedIndex`, a ``SortedList`` for
:class:`SortedKeys`.  The conversion swaps the object's class to a subclass
(``_TreeIndex``, ``_TreeKeys``) whose methods delegate to that structure,
O(log n) per update as sortedcontainers is, so the flat methods carry no
test of the mode.  XCLAIM with IDLE or TIME in the past, XNACK (time 0) and
the re-delivery of IDs below the largest pending one (XGROUP SETID back)
are what convert a large PEL; a group that only reads with ``>`` and acks
stays flat.  In short, per update::

    flat        append O(1); insert O(log n + distance), distance <= FLAT_INSERT_MAX;
                removal O(1) amortised
    converted   O(log n) (one O(n) conversion first)

A delivery of many entries and their XACK also come in bulk: ``extend``
appends k increasing keys above the last one with one C call per
structure, O(k) in C, and ``pop_run`` / ``remove_run`` take out k keys that
are consecutive live keys of the list (an XACK of one delivered batch) with
one slice comparison and one slice step, O(log n + k) in C.  Both fall back
to the per-key methods when their keys do not have that shape (``extend``
calls them itself; ``pop_run`` and ``remove_run`` change nothing and
report it, so that the caller takes its per-key path).

Invariants that ``_check()`` asserts, flat: ``_keys`` is strictly increasing
(sorted, unique); ``0 <= _lo <= len(_keys)``, and the retired prefix is at
most half the list or shorter than ``_MIN_CUT``; ``_dead`` is a subset of
``_keys[_lo:]`` and at most half of it; the live keys ``_keys[_lo:]`` minus
``_dead`` are exactly the index's keys; the first and last key of
``_keys[_lo:]`` are live, or ``_keys`` is empty with ``_lo`` 0.
Converted: the SortedDict or SortedList passes its own ``_check()``, and
the flat fields are unused (``_lo`` 0, no dead keys; a SortedIndex's
``_keys`` empty).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from itertools import filterfalse
from typing import Any

from sortedcontainers import SortedDict, SortedList

# An insert landing more than this many positions before the end of the flat
# list converts the index to sortedcontainers (module docstring).  Moving
# 1024 pointers costs well under a microsecond.
FLAT_INSERT_MAX = 1024

# A retired prefix shorter than this is never cut off (cutting costs a memmove).
_MIN_CUT = 32

_MISSING: Any = object()


class _SortedList:
    """The sorted key list shared by both indexes (see the module docstring).

    Subclasses keep membership; these helpers only move keys in the list.
    """

    __slots__ = ()
    _keys: list[Any]
    _lo: int
    _dead: set[Any]

    def _place(self, key: Any) -> bool:
        """Put ``key``, not live, in the list, where ``key < _keys[-1]``.

        Returns False, changing nothing, if the insert would land more than
        ``FLAT_INSERT_MAX`` positions before the end of the list: the caller
        then converts the index.  Cost: O(1) for a dead key or one just
        below the first live key, else O(log n) comparisons and a
        ``memmove`` of at most ``FLAT_INSERT_MAX`` keys.
        """
        dead = self._dead
        if key in dead:  # its slot is still in the list, in place
            dead.remove(key)
            return True
        keys = self._keys
        lo = self._lo
        if key > keys[lo]:
            at = bisect_left(keys, key, lo)
            if len(keys) - at > FLAT_INSERT_MAX:
                return False
            keys.insert(at, key)
            return True
        # Below the first live key: reuse the last retired slot if it fits.
        if lo and (lo == 1 or keys[lo - 2] < key):
            keys[lo - 1] = key
            self._lo = lo - 1
            return True
        if len(keys) - lo > FLAT_INSERT_MAX:
            return False
        if lo:
            del keys[:lo]
            self._lo = 0
        keys.insert(0, key)
        return True

    def _unplace(self, key: Any) -> None:
        """Take ``key``, a live key of the list, out of it.

        Cost: O(1) amortised (see the module docstring).
        """
        keys = self._keys
        lo = self._lo
        dead = self._dead
        if key == keys[lo]:
            lo += 1
            if lo == len(keys):  # that was the last live key
                keys.clear()
                dead.clear()
                self._lo = 0
                return
            self._front_moved(lo)
        elif key == keys[-1]:
            keys.pop()
            self._back_moved()
        else:
            dead.add(key)
        if dead and len(dead) * 2 > len(keys) - self._lo:
            self._compact()

    def _take_run(self, run: list[Any]) -> bool:
        """Take ``run`` out of the list if it is a run of consecutive live keys
        of it, in order; False, changing nothing, if it is not.

        Cost: O(log n) to find it (O(1) at the front), one slice comparison
        and one slice step, O(k) in C for k keys (marking them dead when the
        run is neither at the front nor at the end; see :meth:`_unplace`).
        """
        keys = self._keys
        if not keys or not run:
            return False
        lo = self._lo
        first = run[0]
        at = lo if first == keys[lo] else bisect_left(keys, first, lo)
        end = at + len(run)
        if end > len(keys) or keys[at:end] != run:
            return False
        dead = self._dead
        if dead and not dead.isdisjoint(run):
            return False
        if end == len(keys) and at == lo:  # every live key
            keys.clear()
            dead.clear()
            self._lo = 0
            return True
        if at == lo:
            self._front_moved(end)
        elif end == len(keys):
            del keys[at:]
            self._back_moved()
        else:
            dead.update(run)
        if dead and len(dead) * 2 > len(keys) - self._lo:
            self._compact()
        return True

    def _front_moved(self, lo: int) -> None:
        """The keys before ``lo`` left, and a live key remains at or after it:
        the first live key becomes the front, and the list's retired head is
        cut when it is most of the list.  Cost: O(1) amortised."""
        keys = self._keys
        dead = self._dead
        if dead:
            while keys[lo] in dead:  # stops: _keys[-1] is live
                dead.remove(keys[lo])
                lo += 1
        if lo > _MIN_CUT and lo * 2 > len(keys):
            del keys[:lo]
            lo = 0
        self._lo = lo

    def _back_moved(self) -> None:
        """Keys left from the end, and a live key remains: the dead keys now
        at the end go too, and the retired head is cut when it is most of
        the list.  Cost: O(1) amortised."""
        keys = self._keys
        dead = self._dead
        if dead:
            while keys[-1] in dead:  # stops: _keys[lo] is live
                dead.remove(keys.pop())
        lo = self._lo
        if lo > _MIN_CUT and lo * 2 > len(keys):
            del keys[:lo]
            self._lo = 0

    def _compact(self) -> None:
        """Rebuild the list of live keys only.  Cost: O(n)."""
        keys = self._keys
        dead = self._dead
        keys[:] = [k for k in keys[self._lo:] if k not in dead]
        dead.clear()
        self._lo = 0

    def _live(self) -> list[Any]:
        """The live keys in order, a new list.

        Cost: O(n).  With few dead keys (d), the slices between them are
        copied, O(n) in C plus O(d log n); else every key is tested against
        ``_dead``, a hash each (about 14 ms for 100,000 pairs).
        """
        keys = self._keys
        dead = self._dead
        lo = self._lo
        if not dead:
            return keys[lo:]
        if len(dead) * 16 > len(keys) - lo:
            return [k for k in keys[lo:] if k not in dead]
        live: list[Any] = []
        start = lo
        for at in sorted(bisect_left(keys, k, lo) for k in dead):
            live += keys[start:at]
            start = at + 1
        live += keys[start:]
        return live

    def __iter__(self) -> Iterator[Any]:
        """The keys in order, from a snapshot.  Cost: O(n) to start."""
        return iter(self._live())

    def irange(
        self,
        minimum: Any = None,
        maximum: Any = None,
        inclusive: tuple[bool, bool] = (True, True),
        reverse: bool = False,
    ) -> Iterator[Any]:
        """Keys from ``minimum`` to ``maximum`` (None: unbounded), in order or reversed.

        As SortedDict.irange: ``inclusive`` says whether each bound is
        included.  The iterator must not be used after the index changes.
        Cost: O(log n) to seek, O(1) per key (plus the dead keys passed over).
        """
        return self._range(minimum, maximum, inclusive, reverse)

    def _range(
        self, minimum: Any, maximum: Any, inclusive: tuple[bool, bool], reverse: bool
    ) -> Iterator[Any]:
        """Live keys between the bounds (None: open), lazily.  Cost: O(log n) to seek."""
        keys = self._keys
        lo = self._lo
        if minimum is None:
            i = lo
        elif inclusive[0]:
            i = bisect_left(keys, minimum, lo)
        else:
            i = bisect_right(keys, minimum, lo)
        if maximum is None:
            j = len(keys)
        elif inclusive[1]:
            j = bisect_right(keys, maximum, lo)
        else:
            j = bisect_left(keys, maximum, lo)
        if i >= j:
            return iter(())
        found = map(keys.__getitem__, range(j - 1, i - 1, -1) if reverse else range(i, j))
        if self._dead:
            return filterfalse(self._dead.__contains__, found)
        return found

    def _check_list(self) -> list[Any]:
        """Assert the list's invariants; return the live keys.  Cost: O(n)."""
        keys = self._keys
        lo = self._lo
        dead = self._dead
        assert all(a < b for a, b in zip(keys, keys[1:])), "keys not strictly increasing"
        assert 0 <= lo <= len(keys), f"_lo {lo} outside the list of {len(keys)}"
        span = keys[lo:]
        assert dead <= set(span), "dead keys outside the live part of the list"
        assert len(dead) * 2 <= len(span), f"{len(dead)} dead keys of {len(span)}"
        assert lo <= _MIN_CUT or lo * 2 <= len(keys), f"retired {lo} of {len(keys)}"
        if span:
            assert span[0] not in dead and span[-1] not in dead, "an end of the list is dead"
        else:
            assert not keys and lo == 0, "an empty index kept its list"
        return [k for k in span if k not in dead]


class SortedIndex(_SortedList):
    """A mapping whose keys are also kept in sorted order, for ordered scans.

    A dict holds the values, so lookups (``get``, ``[]``, ``in``, ``len``)
    are one dict operation.  ``keys()``, ``values()`` and ``items()`` are
    lists in key order; ``irange`` and ``peekitem`` follow sortedcontainers'
    SortedDict.  Only what the consumer groups use is offered.
    """

    __slots__ = ("_map", "_keys", "_lo", "_dead")

    def __init__(self) -> None:
        self._map: dict[Any, Any] = {}
        self._keys: list[Any] = []
        self._lo = 0
        self._dead: set[Any] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default``.  Cost: O(1)."""
        return self._map.get(key, default)

    def __getitem__(self, key: Any) -> Any:
        """The value of ``key``; KeyError if missing.  Cost: O(1)."""
        return self._map[key]

    def __contains__(self, key: Any) -> bool:
        """Whether ``key`` is in the index.  Cost: O(1)."""
        return key in self._map

    def __len__(self) -> int:
        """How many keys.  Cost: O(1)."""
        return len(self._map)

    def __bool__(self) -> bool:
        """Whether the index has any key.  Cost: O(1)."""
        return bool(self._map)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value``.

        Cost: O(1) to replace a value or add a key above the last one (or
        re-add a removed one), else O(log n) and a memmove of at most
        ``FLAT_INSERT_MAX`` keys; an insert further back converts the index
        (O(n), once), after which every update is O(log n).
        """
        table = self._map
        size = len(table)
        table[key] = value
        if len(table) == size:  # a new value for a key already there
            return
        keys = self._keys
        if not keys or keys[-1] < key:
            keys.append(key)
        elif not self._place(key):
            self._convert(key, value)

    def _convert(self, key: Any, value: Any) -> None:
        """Become a :class:`_TreeIndex`, then add ``key`` (already in the dict).

        Cost: O(n) (the live keys are sorted), plus O(log n) for ``key``.
        """
        table = self._map
        live = self._live()
        tree = SortedDict(zip(live, map(table.__getitem__, live)))
        tree[key] = value
        self._map = tree  # a SortedDict is a dict: the lookups are unchanged
        self._keys = []
        self._dead = set()
        self._lo = 0
        self.__class__ = _TreeIndex

    def extend(self, keys: list[Any], values: list[Any]) -> None:
        """Set each of ``keys``, strictly increasing, to the value at the same
        place in ``values`` (a delivered batch: new IDs, in order).

        Cost: O(k) in C for k keys when the first is above every key here
        (one dict update, one list extend); otherwise one ``__setitem__``
        per key (see there).
        """
        mine = self._keys
        if keys and (not mine or mine[-1] < keys[0]):
            self._map.update(zip(keys, values))
            mine.extend(keys)
            return
        for key, value in zip(keys, values):
            self[key] = value

    def pop_run(self, keys: list[Any]) -> list[Any] | None:
        """Remove ``keys`` and return their values, if they are consecutive
        live keys of the index in order (an XACK of one delivered batch);
        None, changing nothing, if they are not: remove them one by one.

        Cost: O(log n + k) for k keys, the k in C (see ``_take_run``).
        """
        if not self._take_run(keys):
            return None
        return list(map(self._map.pop, keys))

    def pop(self, key: Any, default: Any = _MISSING) -> Any:
        """Remove ``key`` and return its value; ``default`` (else KeyError) if
        missing.  Cost: O(1) amortised."""
        value = self._map.pop(key, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default
        keys = self._keys
        lo = self._lo
        if key == keys[lo] and not self._dead:  # _unplace's common case, inline
            lo += 1
            if lo == len(keys):
                keys.clear()
                lo = 0
            elif lo > _MIN_CUT and lo * 2 > len(keys):
                del keys[:lo]
                lo = 0
            self._lo = lo
            return value
        self._unplace(key)
        return value

    def __delitem__(self, key: Any) -> None:
        """Remove ``key``; KeyError if missing.  Cost: O(1) amortised."""
        del self._map[key]
        self._unplace(key)

    def clear(self) -> None:
        """Remove every key.  Cost: O(n)."""
        self._map.clear()
        self._keys.clear()
        self._dead.clear()
        self._lo = 0

    def keys(self) -> list[Any]:
        """The keys in order, a new list.  Cost: O(n)."""
        return self._live()

    def values(self) -> list[Any]:
        """The values in key order, a new list.  Cost: O(n)."""
        return list(map(self._map.__getitem__, self._live()))

    def items(self) -> list[tuple[Any, Any]]:
        """``(key, value)`` pairs in key order, a new list.  Cost: O(n)."""
        keys = self._live()
        return list(zip(keys, map(self._map.__getitem__, keys)))

    def peekitem(self, index: int = -1) -> tuple[Any, Any]:
        """The first (``index`` 0) or last (-1) ``(key, value)``; IndexError if
        empty.  Other indexes are not supported.  Cost: O(1)."""
        keys = self._keys
        if not keys:
            raise IndexError("peekitem on an empty index")
        if index == 0:
            key = keys[self._lo]
        elif index == -1:
            key = keys[-1]
        else:
            raise ValueError("peekitem supports index 0 and -1 only")
        return key, self._map[key]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {v!r}" for k, v in self.items())
        return f"SortedIndex({{{inner}}})"

    def _check(self) -> None:
        """Assert the invariants (module docstring).  Cost: O(n)."""
        live = self._check_list()
        table = self._map
        assert len(live) == len(table), f"{len(live)} live keys, {len(table)} in the dict"
        assert all(k in table for k in live), "a live key is not in the dict"


class SortedKeys(_SortedList):
    """A set of comparable keys kept in sorted order (the PEL's time index).

    Like a SortedList without duplicates: ``add`` of a key already present
    changes nothing, ``remove`` of a missing key raises ValueError.
    """

    __slots__ = ("_keys", "_lo", "_dead")

    def __init__(self) -> None:
        self._keys: list[Any] = []
        self._lo = 0
        self._dead: set[Any] = set()

    def add(self, key: Any) -> None:
        """Add ``key``.

        Cost: O(1) above the last key (or for a removed key just below the
        first), else O(log n) and a memmove of at most ``FLAT_INSERT_MAX``
        keys; an insert further back converts the index (O(n), once), after
        which every update is O(log n).
        """
        keys = self._keys
        if not keys or keys[-1] < key:
            keys.append(key)
            return
        lo = self._lo
        if key < keys[lo]:
            if not self._place(key):
                self._convert(key)
            return
        at = bisect_left(keys, key, lo)
        if keys[at] == key:  # live, or dead and revived in place
            self._dead.discard(key)
        elif len(keys) - at <= FLAT_INSERT_MAX:
            keys.insert(at, key)
        else:
            self._convert(key)

    def _convert(self, key: Any) -> None:
        """Become a :class:`_TreeKeys` (``_keys`` a SortedList), then add ``key``.

        Cost: O(n) (the live keys are sorted), plus O(log n) for ``key``.
        """
        tree = SortedList(self._live())
        tree.add(key)
        self._keys = tree  # type: ignore[assignment]
        self._dead = set()
        self._lo = 0
        self.__class__ = _TreeKeys

    def extend(self, keys: list[Any]) -> None:
        """Add ``keys``, strictly increasing (the pairs of a delivered batch).

        Cost: O(k) in C for k keys when the first is above every key here
        (one list extend); otherwise one :meth:`add` per key.
        """
        mine = self._keys
        if keys and (not mine or mine[-1] < keys[0]):
            mine.extend(keys)
            return
        for key in keys:
            self.add(key)

    def remove_run(self, keys: list[Any]) -> bool:
        """Remove ``keys`` if they are consecutive keys of the index in order;
        False, changing nothing, if they are not: remove them one by one.

        Cost: O(log n + k) for k keys, the k in C (see ``_take_run``).
        """
        return self._take_run(keys)

    def remove(self, key: Any) -> None:
        """Remove ``key``; ValueError if it is not present.

        Cost: O(1) amortised for the first or last key, else O(log n).
        """
        keys = self._keys
        if keys:
            lo = self._lo
            if key == keys[lo]:
                if self._dead:
                    self._unplace(key)
                    return
                lo += 1  # _unplace's common case, inline
                if lo == len(keys):
                    keys.clear()
                    lo = 0
                elif lo > _MIN_CUT and lo * 2 > len(keys):
                    del keys[:lo]
                    lo = 0
                self._lo = lo
                return
            if key == keys[-1]:
                self._unplace(key)
                return
            at = bisect_left(keys, key, lo)
            if at < len(keys) and keys[at] == key and key not in self._dead:
                self._unplace(key)
                return
        raise ValueError(f"{key!r} not in index")

    def __len__(self) -> int:
        """How many keys.  Cost: O(1)."""
        return len(self._keys) - self._lo - len(self._dead)

    def __repr__(self) -> str:
        return f"SortedKeys({self._live()!r})"

    def _check(self) -> None:
        """Assert the invariants (module docstring).  Cost: O(n)."""
        self._check_list()



class _TreeIndex(SortedIndex):
    """A :class:`SortedIndex` after its conversion: ``_map`` is a SortedDict.

    Lookups are the inherited dict operations; updates, scans and
    ``peekitem`` go to the SortedDict, O(log n) each.  ``_keys`` stays empty.
    An iterator method taken from the flat index before the conversion (a
    scan's ``irange``) still works: it calls ``self._range``, found here.
    """

    __slots__ = ()
    _map: SortedDict

    def __setitem__(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value``.  Cost: O(log n)."""
        self._map[key] = value

    def pop(self, key: Any, default: Any = _MISSING) -> Any:
        """Remove ``key`` and return its value, as :meth:`SortedIndex.pop`.  Cost: O(log n)."""
        if default is _MISSING:
            return self._map.pop(key)
        return self._map.pop(key, default)

    def __delitem__(self, key: Any) -> None:
        """Remove ``key``; KeyError if missing.  Cost: O(log n)."""
        del self._map[key]

    def extend(self, keys: list[Any], values: list[Any]) -> None:
        """Set each of ``keys`` to its value.  Cost: O(k log n)."""
        self._map.update(zip(keys, values))

    def pop_run(self, keys: list[Any]) -> list[Any] | None:
        """None: a converted index removes keys one by one.  Cost: O(1)."""
        return None

    def clear(self) -> None:
        """Remove every key; the index stays converted.  Cost: O(n)."""
        self._map.clear()

    def _live(self) -> list[Any]:
        """The keys in order, a new list.  Cost: O(n)."""
        return list(self._map)

    def _range(
        self, minimum: Any, maximum: Any, inclusive: tuple[bool, bool], reverse: bool
    ) -> Iterator[Any]:
        """Keys between the bounds, lazily (SortedDict.irange).  Cost: O(log n) to seek."""
        return self._map.irange(minimum, maximum, inclusive, reverse)

    def peekitem(self, index: int = -1) -> tuple[Any, Any]:
        """The first (``index`` 0) or last (-1) ``(key, value)``.  Cost: O(log n)."""
        if index not in (0, -1):
            raise ValueError("peekitem supports index 0 and -1 only")
        return self._map.peekitem(index)

    def _check(self) -> None:
        """Assert the SortedDict's invariants and that the flat fields are empty."""
        assert not self._keys and self._lo == 0 and not self._dead, "flat fields in use"
        self._map._check()


class _TreeKeys(SortedKeys):
    """A :class:`SortedKeys` after its conversion: ``_keys`` is a SortedList.

    Every operation goes to the SortedList, O(log n).  As with
    :class:`_TreeIndex`, a scan's ``irange`` taken before the conversion
    still works through ``self._range``.
    """

    __slots__ = ()
    _keys: SortedList  # type: ignore[assignment]

    def add(self, key: Any) -> None:
        """Add ``key`` (once only).  Cost: O(log n)."""
        tree = self._keys
        if key not in tree:
            tree.add(key)

    def remove(self, key: Any) -> None:
        """Remove ``key``; ValueError if it is not present.  Cost: O(log n)."""
        self._keys.remove(key)

    def extend(self, keys: list[Any]) -> None:
        """Add ``keys`` (each once only).  Cost: O(k log n)."""
        for key in keys:
            self.add(key)

    def remove_run(self, keys: list[Any]) -> bool:
        """False: a converted index removes keys one by one.  Cost: O(1)."""
        return False

    def __len__(self) -> int:
        """How many keys.  Cost: O(1)."""
        return len(self._keys)

    def _live(self) -> list[Any]:
        """The keys in order, a new list.  Cost: O(n)."""
        return list(self._keys)

    def _range(
        self, minimum: Any, maximum: Any, inclusive: tuple[bool, bool], reverse: bool
    ) -> Iterator[Any]:
        """Keys between the bounds, lazily (SortedList.irange).  Cost: O(log n) to seek."""
        return self._keys.irange(minimum, maximum, inclusive, reverse)

    def _check(self) -> None:
        """Assert the SortedList's invariants and that the flat fields are empty."""
        assert self._lo == 0 and not self._dead, "flat fields in use"
        self._keys._check()
