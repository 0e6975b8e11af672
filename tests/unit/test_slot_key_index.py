"""keyspace.SlotKeyIndex: a cluster-mode database's keys by hash slot.

A hypothesis state machine drives two databases through every way keys
come and go (set, delete, expiry, rename, flush, swap, a rebuild); after
each step each index equals the database's keys grouped by key_slot, and
the counts and GETKEYSINSLOT's prefix agree with it."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tidelog.keyslot import key_slot
from tidelog.keyspace import Database, KeyIndex, SlotKeyIndex

# Few distinct keys, several sharing a hash tag (one slot), so that
# operations collide.
KEYS = st.sampled_from([b"a", b"b", b"{t}1", b"{t}2", b"{t}3", b"x{y}", b"{u}", b"c" * 40])


def grouped(db: Database) -> dict[int, set[bytes]]:
    out: dict[int, set[bytes]] = {}
    for key in db.data:
        out.setdefault(key_slot(key), set()).add(key)
    return out


class SlotIndexMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000
        self.dbs = [Database(i, lambda: self.now) for i in range(2)]
        for db in self.dbs:
            db.use_slot_index()

    @rule(which=st.integers(0, 1), key=KEYS)
    def set(self, which, key):
        self.dbs[which].set(key, b"v")

    @rule(which=st.integers(0, 1), key=KEYS)
    def delete(self, which, key):
        self.dbs[which].delete(key)

    @rule(which=st.integers(0, 1), key=KEYS, ms=st.integers(1, 50))
    def expire(self, which, key, ms):
        db = self.dbs[which]
        if key in db.data:
            db.set_expire(key, self.now + ms)

    @rule(ms=st.integers(0, 60))
    def time_passes(self, ms):
        self.now += ms

    @rule(which=st.integers(0, 1), key=KEYS)
    def lazy_expiry(self, which, key):
        self.dbs[which].get(key)

    @rule(which=st.integers(0, 1))
    def active_expiry(self, which):
        self.dbs[which].expire_cycle()

    @rule(which=st.integers(0, 1), src=KEYS, dst=KEYS)
    def rename(self, which, src, dst):
        db = self.dbs[which]
        if src in db.data and src != dst:
            db.rename(src, dst)

    @rule(which=st.integers(0, 1))
    def flush(self, which):
        self.dbs[which].flush()

    @rule()
    def swap(self):
        self.dbs[0].swap_contents(self.dbs[1])

    @precondition(lambda self: bool(self.dbs[0].data))
    @rule()
    def rebuild(self):
        self.dbs[0].key_index.rebuild(self.dbs[0].data)

    @invariant()
    def index_is_the_keys_by_slot(self):
        for db in self.dbs:
            index = db.key_index
            assert isinstance(index, SlotKeyIndex)
            assert {slot: set(keys) for slot, keys in index.slots.items()} == grouped(db)
            for slot, keys in grouped(db).items():
                assert index.count_in_slot(slot) == len(keys)
                assert set(index.keys_in_slot(slot, 2)) <= keys
                assert len(index.keys_in_slot(slot, 2)) == min(2, len(keys))


TestSlotIndex = SlotIndexMachine.TestCase
TestSlotIndex.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


def test_use_slot_index_files_the_keys_held():
    db = Database(0, lambda: 0)
    db.set(b"{t}1", b"v")
    db.set(b"a", b"v")
    assert type(db.key_index) is KeyIndex  # outside cluster mode: the plain index
    index = db.use_slot_index()
    assert db.use_slot_index() is index
    assert index.count_in_slot(key_slot(b"{t}")) == 1
    assert index.keys_in_slot(key_slot(b"a"), 10) == [b"a"]
    assert index.count_in_slot(0) == 0 and index.keys_in_slot(0, 10) == []
