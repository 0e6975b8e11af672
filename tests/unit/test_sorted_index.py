"""The PEL's sorted indexes, against sortedcontainers as the model.

Two state machines drive :class:`SortedIndex` (model: ``SortedDict``) and
:class:`SortedKeys` (model: ``SortedList`` without duplicates) with the
traffic of a consumer group - runs of increasing inserts, removals from the
front, and now and then an insert out of order, the removal of any key, the
re-insert of a removed one - and compare every read (lookups, ``irange``
with each kind of bound, ``peekitem``, ordered iteration) with the model,
running ``_check()`` after every step.  The cut-off point of the retired
prefix is drawn small too, so that path is taken often, and so is the
threshold of the conversion to sortedcontainers (``FLAT_INSERT_MAX``), so
most runs convert part-way and compare with the model before and after.

A lazy scan that changes the index between the keys it yields is the
group's ``_walk`` (batches, re-seeking by key) over ``irange``: it must
yield keys in strict order, only keys that were present at some point of
the scan, and every key present throughout - also when a change made during
the scan converts the index.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from sortedcontainers import SortedDict, SortedList

from tidelog.types import groups as groups_module
from tidelog.types import sorted_index as index_module
from tidelog.types.sorted_index import SortedIndex, SortedKeys

KEYS = st.integers(min_value=0, max_value=300)
BOUND = st.one_of(st.none(), KEYS)
INCLUSIVE = st.tuples(st.booleans(), st.booleans())
# Each change a scan makes between two keys: (what, key).
CHANGES = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "front", "next"]), KEYS), max_size=3
)


# FLAT_INSERT_MAX values for the machines: small ones convert often; the
# default keeps the index flat for these sizes.
FLAT_MAX = st.sampled_from([0, 2, 3, 5, 8, index_module.FLAT_INSERT_MAX])


def _patch(
    min_cut: int, batch: tuple[int, int], flat_max: int
) -> tuple[int, int, int, int]:
    saved = (
        index_module._MIN_CUT,
        groups_module._FIRST_BATCH,
        groups_module._MAX_BATCH,
        index_module.FLAT_INSERT_MAX,
    )
    index_module._MIN_CUT = min_cut
    groups_module._FIRST_BATCH, groups_module._MAX_BATCH = batch
    index_module.FLAT_INSERT_MAX = flat_max
    return saved


def _restore(saved: tuple[int, int, int, int]) -> None:
    (
        index_module._MIN_CUT,
        groups_module._FIRST_BATCH,
        groups_module._MAX_BATCH,
        index_module.FLAT_INSERT_MAX,
    ) = saved


def _converted(index: SortedIndex | SortedKeys) -> bool:
    return type(index) not in (SortedIndex, SortedKeys)


# The module limits each machine runs under, patched in by its setup.
LIMITS = dict(
    min_cut=st.sampled_from([0, 1, 3, 32]),
    batch=st.sampled_from([(1, 1), (1, 2), (2, 3), (16, 1024)]),
    flat_max=FLAT_MAX,
)


class _PatchedMachine(RuleBasedStateMachine):
    """A machine whose setup patched the module limits (``self.saved``)."""

    def teardown(self) -> None:
        if hasattr(self, "saved"):
            _restore(self.saved)


class IndexMachine(_PatchedMachine):
    """SortedIndex against SortedDict."""

    @initialize(**LIMITS)
    def setup(self, min_cut: int, batch: tuple[int, int], flat_max: int) -> None:
        self.saved = _patch(min_cut, batch, flat_max)
        self.index = SortedIndex()
        self.model = SortedDict()
        self.next = 0  # the next key of an increasing run
        self.removed: list[int] = []
        self.serial = 0


    def value(self) -> str:
        self.serial += 1
        return f"v{self.serial}"

    def put(self, key: int) -> None:
        value = self.value()
        self.index[key] = value
        self.model[key] = value

    def drop(self, key: int) -> None:
        assert self.index.pop(key) == self.model.pop(key)
        self.removed.append(key)

    # -- changes ------------------------------------------------------------------

    @rule(n=st.integers(min_value=1, max_value=80), step=st.integers(min_value=1, max_value=3))
    def append_run(self, n: int, step: int) -> None:
        for _ in range(n):
            self.next += step
            self.put(self.next)

    @rule(n=st.integers(min_value=1, max_value=80))
    def pop_front_run(self, n: int) -> None:
        for _ in range(min(n, len(self.model))):
            key = self.model.peekitem(0)[0]
            assert self.index.peekitem(0) == self.model.peekitem(0)
            self.drop(key)

    @rule(n=st.integers(min_value=1, max_value=80), step=st.integers(min_value=1, max_value=3),
          start=st.one_of(st.none(), KEYS))
    def extend_run(self, n: int, step: int, start: int | None) -> None:
        """A delivered batch in bulk: above every key (start None), or from
        anywhere (the per-key path, re-adds and out-of-order inserts)."""
        first = self.next + step if start is None else start
        keys = [first + i * step for i in range(n)]
        values = [self.value() for _ in keys]
        self.index.extend(keys, values)
        self.model.update(zip(keys, values))
        self.next = max(self.next, keys[-1])

    @rule(data=st.data(), n=st.integers(min_value=1, max_value=40))
    @precondition(lambda self: len(self.model) > 0)
    def pop_run(self, data: st.DataObject, n: int) -> None:
        """An XACK of one batch: consecutive keys are taken out in bulk (flat
        index); anything else (a gap, a missing key, a repeat, reversed)
        changes nothing."""
        keys = list(self.model)
        at = data.draw(st.integers(min_value=0, max_value=len(keys) - 1))
        run = keys[at:at + n]
        shape = data.draw(st.sampled_from(["run", "gap", "missing", "repeat", "reversed"]))
        if shape == "gap" and len(run) > 2:
            del run[1]
        elif shape == "missing":
            run.append(run[-1] + 1000)
        elif shape == "repeat":
            run.append(run[-1])
        elif shape == "reversed" and len(run) > 1:
            run.reverse()
        else:
            shape = "run"
        # A flat index takes a run in bulk when no removed key still holds a
        # slot between its keys (then the per-key path does it).
        bulk = shape == "run" and not _converted(self.index) and not self.index._dead
        got = self.index.pop_run(run)
        if got is not None:
            assert shape == "run"
            assert got == [self.model.pop(key) for key in run]
            self.removed.extend(run)
        else:
            assert not bulk

    @rule()
    @precondition(lambda self: len(self.model) > 0)
    def pop_back(self) -> None:
        assert self.index.peekitem(-1) == self.model.peekitem(-1)
        self.drop(self.model.peekitem(-1)[0])

    @rule(key=KEYS)
    def put_any(self, key: int) -> None:
        self.put(key)

    @rule(key=KEYS, default=st.sampled_from([None, "gone"]))
    def pop_any(self, key: int, default: str | None) -> None:
        assert self.index.pop(key, default) == self.model.pop(key, default)

    @rule(key=KEYS)
    def del_any(self, key: int) -> None:
        if key in self.model:
            del self.index[key]
            del self.model[key]
            self.removed.append(key)
        else:
            with pytest.raises(KeyError):
                del self.index[key]
            with pytest.raises(KeyError):
                self.index.pop(key)

    @rule(data=st.data())
    @precondition(lambda self: len(self.model) > 0)
    def remove_present(self, data: st.DataObject) -> None:
        self.drop(data.draw(st.sampled_from(list(self.model))))

    @rule(data=st.data())
    @precondition(lambda self: bool(self.removed))
    def readd_removed(self, data: st.DataObject) -> None:
        self.put(data.draw(st.sampled_from(self.removed[-40:])))

    @rule()
    def clear(self) -> None:
        self.index.clear()
        self.model.clear()

    # -- reads --------------------------------------------------------------------

    @rule(low=BOUND, high=BOUND, inclusive=INCLUSIVE, reverse=st.booleans())
    def irange(self, low, high, inclusive, reverse) -> None:
        got = list(self.index.irange(low, high, inclusive, reverse))
        assert got == list(self.model.irange(low, high, inclusive, reverse))

    @rule(key=KEYS)
    def lookups(self, key: int) -> None:
        assert (key in self.index) == (key in self.model)
        assert self.index.get(key) == self.model.get(key)
        assert self.index.get(key, "none") == self.model.get(key, "none")
        if key in self.model:
            assert self.index[key] == self.model[key]
        else:
            with pytest.raises(KeyError):
                self.index[key]

    @rule()
    def peek(self) -> None:
        if self.model:
            assert self.index.peekitem(0) == self.model.peekitem(0)
            assert self.index.peekitem(-1) == self.model.peekitem(-1)
            assert self.index.peekitem() == self.model.peekitem()
        else:
            with pytest.raises(IndexError):
                self.index.peekitem(0)

    @rule(low=BOUND, high=BOUND, reverse=st.booleans(), data=st.data())
    def scan_while_changing(self, low, high, reverse, data: st.DataObject) -> None:
        """The group's re-seeking scan, with changes between the keys it yields."""
        lo = -1 if low is None else low
        hi = 10**9 if high is None else high
        at_start = set(self.model)
        ever = set(self.model)  # every key present at some point of the scan
        gone: set[int] = set()  # every key removed during it
        got = []
        was_converted = _converted(self.index)
        for key in groups_module._walk(self.index.irange, low, high, reverse):
            got.append(key)
            for what, k in data.draw(CHANGES):
                if what == "add":
                    self.put(k)
                    ever.add(k)
                elif what == "next":
                    self.next += 1
                    self.put(self.next)
                    ever.add(self.next)
                elif what == "front" and self.model:
                    k = self.model.peekitem(0)[0]
                    self.drop(k)
                    gone.add(k)
                elif what == "remove" and k in self.model:
                    self.drop(k)
                    gone.add(k)
                self.index._check()
        order = sorted(got, reverse=reverse)
        assert got == order and len(set(got)) == len(got), got
        assert set(got) <= ever
        assert all(lo <= k <= hi for k in got)
        throughout = {k for k in at_start - gone if lo <= k <= hi}
        assert throughout <= set(got), sorted(throughout - set(got))
        if _converted(self.index) and not was_converted:
            event("converted during a scan")

    # -- after every step ----------------------------------------------------

    @invariant()
    def agrees(self) -> None:
        index, model = self.index, self.model
        index._check()
        assert len(index) == len(model) and bool(index) == bool(model)
        assert index.keys() == list(model.keys())
        assert list(index) == list(model)
        assert index.values() == list(model.values())
        assert index.items() == list(model.items())
        if model:
            assert index.peekitem(0) == model.peekitem(0)
            assert index.peekitem(-1) == model.peekitem(-1)
        assert _converted(index) or isinstance(index._keys, list)
        if _converted(index):
            # Once converted, for good: no flat state left behind.
            assert not index._keys and not index._dead and index._lo == 0


class KeysMachine(_PatchedMachine):
    """SortedKeys (pairs, as the time index holds) against SortedList."""

    @initialize(**LIMITS)
    def setup(self, min_cut: int, batch: tuple[int, int], flat_max: int) -> None:
        self.saved = _patch(min_cut, batch, flat_max)
        self.keys = SortedKeys()
        self.model = SortedList()
        self.time = 0
        self.id = 0
        self.removed: list[tuple[int, int]] = []


    def add(self, key: tuple[int, int]) -> None:
        self.keys.add(key)
        if key not in self.model:
            self.model.add(key)

    def remove(self, key: tuple[int, int]) -> None:
        self.keys.remove(key)
        self.model.remove(key)
        self.removed.append(key)

    @rule(n=st.integers(min_value=1, max_value=80), tick=st.integers(min_value=0, max_value=2))
    def deliver_run(self, n: int, tick: int) -> None:
        self.time += tick
        for _ in range(n):
            self.id += 1
            self.add((self.time, self.id))

    @rule(n=st.integers(min_value=1, max_value=80))
    def remove_front_run(self, n: int) -> None:
        for _ in range(min(n, len(self.model))):
            self.remove(self.model[0])

    @rule(n=st.integers(min_value=1, max_value=80), tick=st.integers(min_value=0, max_value=2),
          back=st.integers(min_value=0, max_value=3))
    def extend_run(self, n: int, tick: int, back: int) -> None:
        """A delivered batch's pairs in bulk; a clock ``back`` ms behind the
        newest pair takes the per-key path."""
        self.time += tick
        time = max(self.time - back, 0)
        keys = [(time, self.id + 1 + i) for i in range(n)]
        self.id += n
        self.keys.extend(keys)
        self.model.update(k for k in keys if k not in self.model)

    @rule(data=st.data(), n=st.integers(min_value=1, max_value=40))
    @precondition(lambda self: len(self.model) > 0)
    def remove_run(self, data: st.DataObject, n: int) -> None:
        """Consecutive pairs in bulk (flat index); any other list changes nothing."""
        keys = list(self.model)
        at = data.draw(st.integers(min_value=0, max_value=len(keys) - 1))
        run = keys[at:at + n]
        shape = data.draw(st.sampled_from(["run", "gap", "missing", "repeat"]))
        if shape == "gap" and len(run) > 2:
            del run[1]
        elif shape == "missing":
            run.append((run[-1][0] + 100, run[-1][1]))
        elif shape == "repeat":
            run.append(run[-1])
        else:
            shape = "run"
        bulk = shape == "run" and not _converted(self.keys) and not self.keys._dead
        done = self.keys.remove_run(run)
        assert done or not bulk
        if done:
            assert shape == "run"
            for key in run:
                self.model.remove(key)
                self.removed.append(key)

    @rule()
    @precondition(lambda self: len(self.model) > 0)
    def remove_back(self) -> None:
        self.remove(self.model[-1])

    @rule(time=st.integers(min_value=0, max_value=30), id=KEYS)
    def add_any(self, time: int, id: int) -> None:
        self.add((time, id))

    @rule(data=st.data())
    @precondition(lambda self: len(self.model) > 0)
    def remove_present(self, data: st.DataObject) -> None:
        self.remove(data.draw(st.sampled_from(list(self.model))))

    @rule(data=st.data())
    @precondition(lambda self: bool(self.removed))
    def readd_removed(self, data: st.DataObject) -> None:
        self.add(data.draw(st.sampled_from(self.removed[-40:])))

    @rule(time=st.integers(min_value=0, max_value=30), id=KEYS)
    def remove_any(self, time: int, id: int) -> None:
        key = (time, id)
        if key in self.model:
            self.remove(key)
        else:
            with pytest.raises(ValueError):
                self.keys.remove(key)

    @rule(
        low=st.one_of(st.none(), st.tuples(st.integers(0, 30), KEYS)),
        high=st.one_of(st.none(), st.tuples(st.integers(0, 30), KEYS)),
        inclusive=INCLUSIVE,
        reverse=st.booleans(),
    )
    def irange(self, low, high, inclusive, reverse) -> None:
        got = list(self.keys.irange(low, high, inclusive, reverse))
        assert got == list(self.model.irange(low, high, inclusive, reverse))

    @rule(reverse=st.booleans(), data=st.data())
    def scan_while_changing(self, reverse: bool, data: st.DataObject) -> None:
        """The idle scan's walk over the time index, changing it between keys
        (XAUTOCLAIM claims at an older time, acks, new deliveries)."""
        at_start = set(self.model)
        ever = set(self.model)
        gone: set[tuple[int, int]] = set()
        got = []
        was_converted = _converted(self.keys)
        for key in groups_module._walk(self.keys.irange, None, None, reverse):
            got.append(key)
            for what, k in data.draw(CHANGES):
                if what == "add":
                    key = (k % 31, k)
                    self.add(key)
                    ever.add(key)
                elif what == "next":
                    self.id += 1
                    self.add((self.time, self.id))
                    ever.add((self.time, self.id))
                elif what == "front" and self.model:
                    gone.add(self.model[0])
                    self.remove(self.model[0])
                elif what == "remove" and self.model:
                    victim = self.model[k % len(self.model)]
                    gone.add(victim)
                    self.remove(victim)
                self.keys._check()
        assert got == sorted(got, reverse=reverse) and len(set(got)) == len(got), got
        assert set(got) <= ever
        throughout = at_start - gone
        assert throughout <= set(got), sorted(throughout - set(got))
        if _converted(self.keys) and not was_converted:
            event("converted during a scan")

    @invariant()
    def agrees(self) -> None:
        self.keys._check()
        assert len(self.keys) == len(self.model)
        assert list(self.keys) == list(self.model)
        if _converted(self.keys):
            assert isinstance(self.keys._keys, SortedList)
            assert not self.keys._dead and self.keys._lo == 0


IndexMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)
TestSortedIndex = IndexMachine.TestCase
KeysMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)
TestSortedKeys = KeysMachine.TestCase


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), KEYS), max_size=200))
def test_queue_traffic_keeps_the_list_short(ops):
    # Deliveries appended, acks from the front (with a few out of order):
    # the list stays within a small multiple of the live keys.
    index = SortedIndex()
    model = SortedDict()
    top = 0
    for deliver, key in ops:
        if deliver:
            top += 1 + key % 3
            index[top] = key
            model[top] = key
        elif model:
            victim = model.peekitem(0)[0] if key % 4 else model.peekitem(key % len(model))[0]
            assert index.pop(victim) == model.pop(victim)
        index._check()
        live = len(model)
        assert len(index._keys) <= max(4 * live, 2 * live + index_module._MIN_CUT)
    assert index.items() == list(model.items())


def test_time_index_refuses_missing_pairs():
    keys = SortedKeys()
    with pytest.raises(ValueError):
        keys.remove((1, 1))
    keys.add((1, 1))
    keys.add((1, 1))  # a set: once only
    assert list(keys) == [(1, 1)] and len(keys) == 1
    keys.add((2, 1))
    keys.add((3, 1))
    keys.remove((2, 1))
    with pytest.raises(ValueError):
        keys.remove((2, 1))  # dead, not present
    keys._check()


def test_conversion_threshold():
    # Appends and inserts within FLAT_INSERT_MAX of the end stay flat; an
    # insert further back converts, once, keeping every key and value.
    limit = index_module.FLAT_INSERT_MAX
    index = SortedIndex()
    keys = SortedKeys()
    for i in range(2, 2 * limit + 10, 2):
        index[i] = -i
        keys.add((i, i))
    top = 2 * limit + 8
    index[top - 2 * limit + 1] = "near"  # limit keys after it: stays flat
    keys.add((top - 2 * limit + 1, 0))
    assert type(index) is SortedIndex and type(keys) is SortedKeys
    index[top - 2 * limit - 1] = "far"  # limit + 1 keys after it
    keys.add((top - 2 * limit - 1, 0))
    assert type(index) is not SortedIndex and isinstance(index, SortedIndex)
    assert type(keys) is not SortedKeys and isinstance(keys, SortedKeys)
    index._check()
    keys._check()
    model = SortedDict((i, -i) for i in range(2, 2 * limit + 10, 2))
    model[top - 2 * limit + 1] = "near"
    model[top - 2 * limit - 1] = "far"
    assert index.items() == list(model.items()) and len(index) == len(model)
    assert len(keys) == len(model) and list(keys)[0] == (2, 2)
    index.clear()  # converted for good
    index[5] = "x"
    assert type(index) is not SortedIndex and index.items() == [(5, "x")]
    index._check()


def test_front_insert_converts_a_large_index():
    # XNACK's time 0 goes before every owned entry: flat up to the
    # threshold, converted beyond it.
    limit = index_module.FLAT_INSERT_MAX
    small, large = SortedKeys(), SortedKeys()
    for i in range(1, limit + 1):
        small.add((100, i))
        large.add((100, i))
    large.add((100, limit + 1))
    small.add((0, 1))
    large.add((0, 1))
    assert type(small) is SortedKeys and type(large) is not SortedKeys
    for keys in (small, large):
        keys._check()
        assert next(iter(keys)) == (0, 1)
        keys.remove((0, 1))
        with pytest.raises(ValueError):
            keys.remove((0, 1))
        keys._check()


def test_scan_across_a_conversion(monkeypatch):
    # A scan holds the flat index's irange; the index converts between two
    # batches and the scan goes on, re-seeking in the SortedDict.
    monkeypatch.setattr(index_module, "FLAT_INSERT_MAX", 4)
    monkeypatch.setattr(groups_module, "_FIRST_BATCH", 2)
    monkeypatch.setattr(groups_module, "_MAX_BATCH", 2)
    index = SortedIndex()
    for i in range(10, 40, 2):
        index[i] = i
    got = []
    for key in groups_module._walk(index.irange, None, None, False):
        got.append(key)
        if key == 14:
            index[11] = 11  # behind the scan, far back: converts
            assert type(index) is not SortedIndex
            index[21] = 21  # ahead of the scan
            del index[30]
        index._check()
    assert got == [k for k in range(10, 40) if (k % 2 == 0 or k == 21) and k != 30]
