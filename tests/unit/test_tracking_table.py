"""The tracking table (types/tracking.py) against a plain model: a hypothesis
state machine runs random remembers, invalidations, flushes, prefix
registrations, modifications and broadcasts on both and compares every
answer and the counters after each step."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tidelog.types.tracking import TrackingTable, overlapping

KEYS = st.sampled_from([b"", b"a", b"ab", b"abc", b"b", b"ba", b"\xff", b"a\x00"])
IDS = st.integers(1, 5)


class Model:
    """The table as plainly as it can be said: lists and dicts, no counters."""

    def __init__(self) -> None:
        self.keys: dict[bytes, list[int]] = {}
        self.prefixes: dict[bytes, list[int]] = {}
        self.modified: dict[bytes, dict[bytes, int | None]] = {}

    def remember(self, client_id: int, keys: list[bytes]) -> None:
        for key in keys:
            ids = self.keys.setdefault(key, [])
            if client_id not in ids:
                ids.append(client_id)

    def invalidate(self, key: bytes) -> list[int] | None:
        return self.keys.pop(key, None)

    def add_prefix(self, client_id: int, prefix: bytes) -> bool:
        clients = self.prefixes.setdefault(prefix, [])
        self.modified.setdefault(prefix, {})
        if client_id in clients:
            return False
        clients.append(client_id)
        return True

    def remove_prefix(self, client_id: int, prefix: bytes) -> None:
        clients = self.prefixes.get(prefix)
        if clients is None:
            return
        if client_id in clients:
            clients.remove(client_id)
        if not clients:
            del self.prefixes[prefix]
            del self.modified[prefix]

    def touch(self, key: bytes, modifier: int | None) -> bool:
        hit = False
        for prefix in self.prefixes:
            if key[:len(prefix)] == prefix:
                self.modified[prefix][key] = modifier
                hit = True
        return hit

    def drain(self):
        due = []
        for prefix in sorted(self.prefixes):
            keys = self.modified[prefix]
            if keys:
                due.append((prefix, sorted(keys.items()), list(self.prefixes[prefix])))
                self.modified[prefix] = {}
        return due


class TableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.table = TrackingTable()
        self.model = Model()

    @rule(client_id=IDS, keys=st.lists(KEYS, max_size=4))
    def remember(self, client_id, keys):
        self.table.remember(client_id, keys)
        self.model.remember(client_id, keys)

    @rule(key=KEYS)
    def invalidate(self, key):
        got = self.table.invalidate(key)
        want = self.model.invalidate(key)
        assert (None if got is None else list(got)) == want

    @rule()
    def flush(self):
        self.table.flush()
        self.model.keys.clear()

    @rule()
    def oldest(self):
        assert self.table.oldest() == next(iter(self.model.keys), None)

    @rule(client_id=IDS, prefix=KEYS)
    def add_prefix(self, client_id, prefix):
        assert self.table.add_prefix(client_id, prefix) == self.model.add_prefix(client_id, prefix)

    @rule(client_id=IDS, prefix=KEYS)
    def remove_prefix(self, client_id, prefix):
        self.table.remove_prefix(client_id, prefix)
        self.model.remove_prefix(client_id, prefix)

    @rule(key=KEYS, modifier=st.none() | IDS)
    def modified(self, key, modifier):
        assert self.table.modified(key, modifier) == self.model.touch(key, modifier)

    @rule()
    def drain(self):
        assert self.table.drain() == self.model.drain()

    @invariant()
    def same_contents(self):
        table, model = self.table, self.model
        assert {k: list(v) for k, v in table.keys.items()} == model.keys
        assert list(table.keys) == list(model.keys)  # the order keys came in
        assert table.items == sum(len(v) for v in model.keys.values())
        assert {p: list(s.clients) for p, s in table.prefixes.items()} == model.prefixes
        assert table.pending() == any(model.modified.values())


TestTableMachine = TableMachine.TestCase
TestTableMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


def test_overlapping_is_one_starting_the_other():
    assert overlapping(b"a", b"ab") and overlapping(b"ab", b"a") and overlapping(b"x", b"x")
    assert overlapping(b"", b"anything")
    assert not overlapping(b"ab", b"ac") and not overlapping(b"b", b"ab")


def test_flush_keeps_the_prefixes_and_their_pending_keys():
    table = TrackingTable()
    table.remember(1, [b"k", b"j"])
    table.add_prefix(2, b"k")
    table.modified(b"k1", 3)
    table.flush()
    assert table.keys == {} and table.items == 0
    assert table.drain() == [(b"k", [(b"k1", 3)], [2])]
    assert table.drain() == []
